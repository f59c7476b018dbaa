// Anthropic stop_reason → IR FinishReason. Every documented reason is mapped explicitly;
// an unknown one becomes `other` with the raw value kept — never a silent `stop`, which
// makes agents like Claude Code end their turn.
import { own } from '../../lib/own.ts'
import type { Finish, FinishReason } from '../../ir/types.ts'

const FROM_ANTHROPIC: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'refusal',
  pause_turn: 'pause',
  model_context_window_exceeded: 'context_exceeded',
}

/**
 * `called`: the reply holds tool calls. A message that ended whole without saying why (a server
 * of the wire that leaves `stop_reason` null) ended as its content says: at its calls, or done.
 */
export function finishFromAnthropic(raw: string | null | undefined, stopSequence?: string | null, called = false): Finish {
  if (raw == null) return stopSequence ? { reason: 'stop', stopSequence } : { reason: called ? 'tool_calls' : 'stop' }
  const f: Finish = { reason: own(FROM_ANTHROPIC, raw) ?? 'other', raw: raw ?? undefined }
  if (raw === 'stop_sequence' || stopSequence) f.stopSequence = stopSequence ?? null
  return f
}

/** A stop at the reply tool's call (reply-tool.ts), with no call of the client's beside it, is the turn's end. */
export const repliedStop = (raw: string | null | undefined, replied: boolean, called: boolean): string | null | undefined =>
  replied && !called && raw === 'tool_use' ? 'end_turn' : raw
