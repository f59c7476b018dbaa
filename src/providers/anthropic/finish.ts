// Anthropic stop_reason ⇄ IR FinishReason. Every documented reason is mapped explicitly;
// an unknown one becomes `other` with the raw value kept — never a silent `stop`, which
// makes agents like Claude Code end their turn (pitfall 16).
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

/** IR → `stop_reason`, for surfaces that speak messages. */
export const TO_ANTHROPIC: Record<FinishReason, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  refusal: 'refusal',
  pause: 'pause_turn',
  context_exceeded: 'model_context_window_exceeded',
  error: 'end_turn',
  other: 'end_turn',
}

export function finishFromAnthropic(raw: string | null | undefined, stopSequence?: string | null): Finish {
  const f: Finish = { reason: (raw && FROM_ANTHROPIC[raw]) || 'other', raw: raw ?? undefined }
  if (raw === 'stop_sequence' || stopSequence) f.stopSequence = stopSequence ?? null
  return f
}
