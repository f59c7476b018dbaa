// Relaying an OpenAI-family upstream's chat reply to the client: JSON as is, SSE event by
// event as the bytes arrive, through the tap of passthrough.ts.
import type { CallContext } from '../../providers/types.ts'
import type { Outcome } from './outcome.ts'
import { chatDeltaText, chatPromptText, EventSplitter, newTap, tapEvent, tapJson, type Tap } from './passthrough.ts'
import { failureOf, jsonReply, MidStreamError } from './reply.ts'
import { sseBody, SSE_HEADERS, type SseOptions } from './sse.ts'

export type PassthroughCall = (body: Record<string, unknown>, ctx: CallContext) => Promise<Response>

function noteTap(tap: Tap, out: Outcome) {
  if (tap.id) out.id = tap.id
  if (tap.usage) out.usage = tap.usage
  out.finishReason = tap.finishReason
}

export async function relayJson(call: PassthroughCall, body: Record<string, unknown>, ctx: CallContext, out: Outcome, headers: Record<string, string>): Promise<Response> {
  try {
    const res = await call(body, ctx)
    const text = await res.text()
    noteTap(tapJson(text), out)
    out.firstToken()
    return jsonReply(text, headers, res.status)
  } catch (e) {
    throw failureOf(e, out)
  } finally {
    out.record()
  }
}

export async function relayStream(
  call: PassthroughCall,
  body: Record<string, unknown>,
  clientWantsUsage: boolean,
  ctx: CallContext,
  out: Outcome,
  headers: Record<string, string>,
  sse: SseOptions,
): Promise<Response> {
  const tap = newTap()
  // Kept as received and parsed only if the stream ends early, to bill what was relayed.
  const relayed: string[] = []
  out.producedText = () => chatDeltaText(relayed)
  out.promptText = () => chatPromptText(body)
  const split = new EventSplitter()
  const dec = new TextDecoder()
  let reader!: ReadableStreamDefaultReader<Uint8Array>
  let firstFrames = ''
  // Commit late: read up to the first whole event before sending the status line.
  try {
    const res = await call(body, ctx)
    if (!res.body) throw new MidStreamError('upstream sent an empty stream', 502)
    reader = res.body.getReader()
    while (firstFrames === '') {
      const { done, value } = await reader.read()
      if (done) throw new MidStreamError('upstream stream ended before its first event', 502)
      firstFrames = pass(split.push(dec.decode(value, { stream: true })))
    }
  } catch (e) {
    const err = failureOf(e instanceof MidStreamError ? { status: e.status, message: e.message } : e, out)
    out.record()
    throw err
  }

  function pass(events: string[]): string {
    let text = ''
    for (const ev of events) {
      relayed.push(ev)
      const sent = tapEvent(ev, tap, !clientWantsUsage)
      if (sent !== null) text += sent
    }
    if (tap.produced) out.firstToken()
    return text
  }

  const frames = (async function* () {
    try {
      yield firstFrames
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        yield pass(split.push(dec.decode(value, { stream: true })))
      }
      const rest = split.rest() + dec.decode()
      if (rest.trim() !== '') yield pass([rest])
      // An upstream that closed without [DONE] failed mid-stream: so must we (§7.8).
      if (!tap.done) throw new MidStreamError('upstream stream ended early', 502)
    } catch (e) {
      const err = e instanceof MidStreamError ? e : new MidStreamError(ctx.signal.aborted ? 'client disconnected' : `upstream stream failed: ${(e as Error)?.message ?? e}`, ctx.signal.aborted ? 499 : 502)
      out.fail(err.status, err.message)
      throw err
    } finally {
      noteTap(tap, out)
      reader.cancel().catch(() => {})
      out.record()
    }
  })()
  return new Response(sseBody(frames, sse), { status: 200, headers: { ...SSE_HEADERS, ...headers } })
}
