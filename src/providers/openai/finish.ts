// OpenAI chat finish_reason → IR FinishReason. Unknown values stay visible as `other`
// with the raw string kept, never a silent `stop`.
import { own } from '../../lib/own.ts'
import type { Finish, FinishReason } from '../../ir/types.ts'

const FROM_OPENAI: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
  // what servers speaking the chat wire say for the same ends (vLLM, TGI, llama.cpp and others)
  eos: 'stop',
  eos_token: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
}

/**
 * A reply that is a refusal ends with `stop`; told apart (as Anthropic's `refusal` stop
 * reason), so that a client of the other family does not read it as an answer.
 */
export function refusedFinish(f: Finish, refused: boolean): Finish {
  return refused && f.reason === 'stop' ? { reason: 'refusal', raw: f.raw } : f
}

export function finishFromOpenAI(raw: string | null | undefined): Finish {
  if (!raw) return { reason: 'other', raw: raw ?? undefined }
  return { reason: own(FROM_OPENAI, raw) ?? 'other', raw }
}

/**
 * A reply that called tools and ended with `stop` (what OpenAI and vLLM say for a call that
 * `tool_choice` named): its end is the calls', so that a client of the other family runs them
 * (Anthropic says `tool_use` for a forced call).
 */
export function calledFinish(f: Finish, called: boolean): Finish {
  return called && f.reason === 'stop' ? { reason: 'tool_calls', raw: f.raw } : f
}
