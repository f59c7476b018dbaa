// The fake upstream: OpenAI chat completions, OpenAI Responses and Anthropic messages, JSON and SSE,
// answering at once. Streams send STREAM_CHUNKS text chunks STREAM_GAP_MS apart, each
// stamped with its send time. Run on its own (`bun scripts/bench/upstream.ts [port]`) it
// prints `upstream listening on <url>`; run.ts starts it that way, pinned to a core.
// For the failover bench: UPSTREAM_DELAY_MS holds every POST's answer that long (a network
// round trip), UPSTREAM_FAIL_STATUS answers every POST with that status instead.
// For the long-stream bench: UPSTREAM_STREAM_CHUNKS and UPSTREAM_STREAM_GAP_MS set a stream's
// length and pace (e.g. 400 chunks 50 ms apart); streams are then driven by one shared ticker
// (ticker.ts) instead of a timer each, so thousands of them stay cheap on the load core.
import { tickedStream } from './ticker.ts'
import { anthropicMessage, anthropicStream, epochMs, openaiCompletion, openaiResponse, openaiResponsesStream, openaiStream, stamp, STREAM_CHUNKS, STREAM_GAP_MS, type ResponsesRequest } from './wire.ts'

const JSON_HEADERS = { 'content-type': 'application/json' }
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }

type Stream = { content(i: number, text: string): string; end(): string }

const LONG = process.env.UPSTREAM_STREAM_CHUNKS ? { chunks: Number(process.env.UPSTREAM_STREAM_CHUNKS), gapMs: Number(process.env.UPSTREAM_STREAM_GAP_MS ?? STREAM_GAP_MS) } : undefined

function sse(s: Stream, signal: AbortSignal): Response {
  if (LONG) return new Response(tickedStream(s, LONG, signal), { headers: SSE_HEADERS })
  const enc = new TextEncoder()
  let timer: ReturnType<typeof setTimeout> | undefined
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      let i = 0
      const send = () => {
        if (signal.aborted) return
        c.enqueue(enc.encode(s.content(i, stamp(epochMs()))))
        if (++i < STREAM_CHUNKS) timer = setTimeout(send, STREAM_GAP_MS)
        else {
          c.enqueue(enc.encode(s.end()))
          c.close()
        }
      }
      send()
    },
    cancel() {
      clearTimeout(timer)
    },
  })
  return new Response(body, { headers: SSE_HEADERS })
}

const error = (status: number, message: string) => new Response(JSON.stringify({ error: { message, type: 'invalid_request_error' } }), { status, headers: JSON_HEADERS })

async function bodyOf(req: Request): Promise<Record<string, any> | Response> {
  try {
    const b = await req.json()
    if (b && typeof b === 'object' && typeof b.model === 'string') return b
  } catch {}
  return error(400, 'body must be JSON with a model')
}

async function chat(req: Request): Promise<Response> {
  if (!req.headers.get('authorization')?.startsWith('Bearer ')) return error(401, 'missing bearer key')
  const b = await bodyOf(req)
  if (b instanceof Response) return b
  if (b.stream === true) return sse(openaiStream(b.model, b.stream_options?.include_usage === true), req.signal)
  return new Response(openaiCompletion(b.model), { headers: JSON_HEADERS })
}

async function responses(req: Request): Promise<Response> {
  if (!req.headers.get('authorization')?.startsWith('Bearer ')) return error(401, 'missing bearer key')
  const b = await bodyOf(req)
  if (b instanceof Response) return b
  const r = b as ResponsesRequest
  if (b.stream === true) return sse(openaiResponsesStream(r), req.signal)
  return new Response(openaiResponse(r), { headers: JSON_HEADERS })
}

async function messages(req: Request): Promise<Response> {
  // the gateway sends x-api-key; newer Anthropic SDKs send a bearer token instead
  if (!req.headers.get('x-api-key') && !req.headers.get('authorization')?.startsWith('Bearer ')) return error(401, 'missing x-api-key')
  const b = await bodyOf(req)
  if (b instanceof Response) return b
  if (b.stream === true) return sse(anthropicStream(b.model), req.signal)
  return new Response(anthropicMessage(b.model), { headers: JSON_HEADERS })
}

const MODELS = JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 0, owned_by: 'openai' }] })

type Handler = (req: Request) => Promise<Response>

/** A handler as the environment asks: delayed, or failing; as it is otherwise. */
function shaped(h: Handler, env = process.env): Handler {
  const delayMs = Number(env.UPSTREAM_DELAY_MS ?? 0)
  const fail = Number(env.UPSTREAM_FAIL_STATUS ?? 0)
  if (!delayMs && !fail) return h
  return async (req) => {
    if (delayMs) await Bun.sleep(delayMs)
    if (!fail) return h(req)
    await req.arrayBuffer()
    return new Response(JSON.stringify({ error: { message: 'failing on purpose', type: 'server_error' } }), { status: fail, headers: JSON_HEADERS })
  }
}

export function startUpstream(port = 0) {
  return Bun.serve({
    hostname: '127.0.0.1',
    port,
    routes: {
      '/v1/chat/completions': { POST: shaped(chat) },
      '/v1/responses': { POST: shaped(responses) },
      '/v1/messages': { POST: shaped(messages) },
      '/v1/models': { GET: () => new Response(MODELS, { headers: JSON_HEADERS }) },
    },
    fetch: (req) => error(404, `no route ${new URL(req.url).pathname}`),
  })
}

if (import.meta.main) {
  const server = startUpstream(Number(process.argv[2] ?? 0))
  console.log(`upstream listening on http://127.0.0.1:${server.port}`)
}
