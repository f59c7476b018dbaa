// An OpenAI-compatible server may answer chat completions without usage (older vLLM, llama.cpp,
// some hosted APIs ignore `stream_options.include_usage`). Its reply is completed here, before
// the gateway reads it: a JSON reply gets a `usage` object, a stream a usage chunk (no choices,
// as OpenAI sends it) before `[DONE]`. Both are counted with the gateway's tokenizer (o200k, in
// the token workers: the model's own tokenizer may count somewhat differently) and marked
// `switchyard_counted: true`, which the IR usage carries on as `counted`. A reply that has usage
// passes untouched.
import { eventFields, EventSplitter, parseJsonObject } from '../../routing/sse-events.ts'
import { countTokensAsync } from '../../tokens/count.ts'
import { replyText } from '../reply-text.ts'
import { writtenBy } from './compat-fields.ts'

type Json = Record<string, any>

/** The usage the gateway counted, in OpenAI's shape, marked as counted. */
async function counted(promptText: string, outputText: string, lane?: string): Promise<Json> {
  const [prompt, completion] = await Promise.all([countTokensAsync(promptText, lane), countTokensAsync(outputText, lane)])
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, switchyard_counted: true }
}

const hasUsage = (j: Json) => j.usage !== null && typeof j.usage === 'object'

function headersOf(res: Response): Headers {
  const h = new Headers(res.headers)
  // the body is no longer the bytes the upstream sent
  h.delete('content-length')
  h.delete('content-encoding')
  return h
}

/** `res` with usage where the upstream sent none; `promptText` is read only then. */
export async function withCountedUsage(res: Response, promptText: () => string, lane?: string): Promise<Response> {
  if (!res.body) return res
  const init = { status: res.status, statusText: res.statusText, headers: headersOf(res) }
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) return new Response(completedStream(res.body, promptText, lane), init)
  const text = await replyText(res)
  const j = parseJsonObject(text)
  if (!j || hasUsage(j) || !Array.isArray(j.choices)) return new Response(text, init)
  const out: string[] = []
  for (const c of j.choices) writtenBy(c?.message, (t) => out.push(t))
  j.usage = await counted(promptText(), out.join(''), lane)
  return new Response(JSON.stringify(j), init)
}

/** The stream as it came, event by event, with a counted usage chunk before `[DONE]` when it had none. */
function completedStream(body: ReadableStream<Uint8Array>, promptText: () => string, lane?: string): ReadableStream<Uint8Array> {
  const split = new EventSplitter()
  const dec = new TextDecoder()
  const enc = new TextEncoder()
  const produced: string[] = []
  let usageSeen = false
  let head: Json = {}
  const pass = async (raw: string, out: TransformStreamDefaultController<Uint8Array>) => {
    const { data } = eventFields(raw)
    if (data === '[DONE]' && !usageSeen) {
      usageSeen = true
      const usage = await counted(promptText(), produced.join(''), lane)
      out.enqueue(enc.encode(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\n`))
    } else if (data !== null && data !== '[DONE]') {
      const j = parseJsonObject(data)
      if (j) {
        if (hasUsage(j)) usageSeen = true
        if (head.id === undefined && typeof j.id === 'string') head = { id: j.id, created: j.created, model: j.model }
        for (const c of Array.isArray(j.choices) ? j.choices : []) writtenBy(c?.delta, (t) => produced.push(t))
      }
    }
    out.enqueue(enc.encode(raw))
  }
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, out) {
        for (const raw of split.push(dec.decode(chunk, { stream: true }))) await pass(raw, out)
      },
      async flush(out) {
        const rest = split.rest() + dec.decode()
        if (rest !== '') await pass(rest, out)
      },
    }),
  )
}
