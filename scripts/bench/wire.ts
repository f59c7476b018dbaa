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

/**
 * Each stamp once, in the order it first appears: a Responses stream repeats the whole text
 * after its deltas (`output_text.done`, `content_part.done`, `output_item.done`,
 * `response.completed`), and those repeats are not chunks. Stamps are send times taken
 * `STREAM_GAP_MS` apart, so two chunks never share one.
 */
export function distinctStampsIn(text: string): number[] {
  return [...new Set(stampsIn(text))]
}

const USAGE_OPENAI = {
  prompt_tokens: 12,
  completion_tokens: 9,
  total_tokens: 21,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
}

/** The same counts as the chat reply, in the Responses API's names. */
const USAGE_RESPONSES = {
  input_tokens: USAGE_OPENAI.prompt_tokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: USAGE_OPENAI.completion_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: USAGE_OPENAI.total_tokens,
}

const USAGE_ANTHROPIC = { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 }

let seq = 0
// Real upstreams hand out random ids, and the gateway indexes records by them (the lookup by
// the id the client saw): BENCH_IDS=random makes these random too, which costs the gateway's
// SQLite a page write a record (experiments/ids.ts). The bench's chat and messages ids are
// sequential unless BENCH_IDS=random; its Responses ids are always random.
const RANDOM_IDS = process.env.BENCH_IDS === 'random'
const nextId = (prefix: string) => (RANDOM_IDS ? prefix + crypto.randomUUID().replaceAll('-', '').slice(0, 24) : `${prefix}${(++seq).toString(36).padStart(10, '0')}`)

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

/** What a Responses reply echoes of its request. */
export interface ResponsesRequest {
  model: string
  max_output_tokens?: number
  instructions?: string
  store?: boolean
  temperature?: number
  top_p?: number
}

const hex = () => crypto.randomUUID().replaceAll('-', '')

/** A Response object as OpenAI's Responses API sends it (test/fixtures/openai/responses/nonstream-text.json). */
function responseObject(req: ResponsesRequest, id: string, createdAt: number, status: 'in_progress' | 'completed', output: unknown[]) {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    ...(status === 'completed' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    max_tool_calls: null,
    model: req.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: status === 'completed' ? 'default' : 'auto',
    store: req.store ?? true,
    temperature: req.temperature ?? 1.0,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_logprobs: 0,
    top_p: req.top_p ?? 1.0,
    truncation: 'disabled',
    usage: status === 'completed' ? USAGE_RESPONSES : null,
    user: null,
    metadata: {},
  }
}

const messageItem = (id: string, text: string) => ({
  id,
  type: 'message',
  status: 'completed',
  content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
  role: 'assistant',
})

export function openaiResponse(req: ResponsesRequest): string {
  const id = `resp_bench${hex()}`
  return JSON.stringify(responseObject(req, id, Math.floor(Date.now() / 1000), 'completed', [messageItem(`msg_bench${hex()}`, 'The capital of France is Paris.')]))
}

/**
 * A Responses stream (test/fixtures/openai/responses/stream-text.sse, with the sequence
 * numbers the API now sends): created, in_progress, the message item and its text part
 * opened with the first delta; the text repeated whole in the closing events, then
 * `response.completed` with usage.
 */
export function openaiResponsesStream(req: ResponsesRequest) {
  const id = `resp_bench${hex()}`
  const itemId = `msg_bench${hex()}`
  const createdAt = Math.floor(Date.now() / 1000)
  let seq = 0
  let text = ''
  const ev = (type: string, payload: Record<string, unknown>) => event(type, { type, sequence_number: seq++, ...payload })
  const at = { item_id: itemId, output_index: 0, content_index: 0 }
  const part = () => ({ type: 'output_text', annotations: [], logprobs: [], text })
  return {
    content(i: number, delta: string) {
      let out = ''
      if (i === 0) {
        const opening = responseObject(req, id, createdAt, 'in_progress', [])
        out +=
          ev('response.created', { response: opening }) +
          ev('response.in_progress', { response: opening }) +
          ev('response.output_item.added', { output_index: 0, item: { id: itemId, type: 'message', status: 'in_progress', content: [], role: 'assistant' } }) +
          ev('response.content_part.added', { ...at, part: part() })
      }
      text += delta
      return out + ev('response.output_text.delta', { ...at, delta, logprobs: [] })
    },
    end: () =>
      ev('response.output_text.done', { ...at, text, logprobs: [] }) +
      ev('response.content_part.done', { ...at, part: part() }) +
      ev('response.output_item.done', { output_index: 0, item: messageItem(itemId, text) }) +
      ev('response.completed', { response: responseObject(req, id, createdAt, 'completed', [messageItem(itemId, text)]) }),
  }
}
