// What the fake upstream says, in each provider's wire shape: small, realistic bodies
// (id, usage, finish reason) so the gateway's taps and translators do their real work.
// Stream text deltas carry the upstream's send time (`@<epoch ms>;`) so the client can
// tell whether each chunk arrived when it was sent or was held back.

export const STREAM_CHUNKS = 6
export const STREAM_GAP_MS = 4

/** Epoch milliseconds with sub-ms precision, comparable across processes on one host. */
export const epochMs = () => performance.timeOrigin + performance.now()

export const stamp = (t: number) => `@${t.toFixed(3)};`

/** Every `@<ms>;` stamp in a piece of text, in order. */
export function stampsIn(text: string): number[] {
  const out: number[] = []
  for (const m of text.matchAll(/@(\d+\.\d+);/g)) out.push(Number(m[1]))
  return out
}

const USAGE_OPENAI = {
  prompt_tokens: 12,
  completion_tokens: 9,
  total_tokens: 21,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
}

const USAGE_ANTHROPIC = { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 }

let seq = 0
const nextId = (prefix: string) => `${prefix}${(++seq).toString(36).padStart(10, '0')}`

export function openaiCompletion(model: string): string {
  return JSON.stringify({
    id: nextId('chatcmpl-bench'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'The capital of France is Paris.', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: USAGE_OPENAI,
    service_tier: 'default',
    system_fingerprint: 'fp_bench',
  })
}

/** An OpenAI chat stream as frames; `text(i)` is called at send time so it can stamp it. */
export function openaiStream(model: string, includeUsage: boolean) {
  const id = nextId('chatcmpl-bench')
  const created = Math.floor(Date.now() / 1000)
  const frame = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_bench', choices, ...(includeUsage ? { usage } : {}) })}\n\n`
  return {
    content: (i: number, text: string) => frame([{ index: 0, delta: i === 0 ? { role: 'assistant', content: text } : { content: text }, logprobs: null, finish_reason: null }]),
    end: () =>
      frame([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]) +
      (includeUsage ? frame([], USAGE_OPENAI) : '') +
      'data: [DONE]\n\n',
  }
}

export function anthropicMessage(model: string): string {
  return JSON.stringify({
    id: nextId('msg_bench'),
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: 'The capital of France is Paris.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: USAGE_ANTHROPIC,
  })
}

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`

/** An Anthropic messages stream: the first content delta rides with message_start. */
export function anthropicStream(model: string) {
  const id = nextId('msg_bench')
  return {
    content: (i: number, text: string) =>
      (i === 0
        ? event('message_start', {
            type: 'message_start',
            message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...USAGE_ANTHROPIC, output_tokens: 1 } },
          }) + event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
        : '') + event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    end: () =>
      event('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE_ANTHROPIC.output_tokens } }) +
      event('message_stop', { type: 'message_stop' }),
  }
}
