// The chat surface over the IR: any adapter (Anthropic, mock, …) answers, and the chat
// codec turns its response or events into chat-style JSON or SSE.
import { requestText } from '../../ir/tokens.ts'
import type { GenerationRequest, StreamEvent } from '../../ir/types.ts'
import type { CallContext, ProviderAdapter } from '../../providers/types.ts'
import { encodeChatResponse } from './encode.ts'
import type { Outcome } from './outcome.ts'
import { failureOf, jsonReply, MidStreamError } from './reply.ts'
import { sseBody, SSE_HEADERS, type SseOptions } from './sse.ts'
import { createChatStreamEncoder } from './stream.ts'

export async function translatedJson(adapter: ProviderAdapter, ir: GenerationRequest, ctx: CallContext, out: Outcome, headers: Record<string, string>): Promise<Response> {
  try {
    const r = await adapter.generate(ir, ctx)
    out.id = r.id
    out.usage = r.usage
    const body = encodeChatResponse(r, r.model || ir.model)
    out.finishReason = (body.choices as { finish_reason: string }[])[0]!.finish_reason
    out.firstToken()
    return jsonReply(body, headers)
  } catch (e) {
    throw failureOf(e, out)
  } finally {
    out.record()
  }
}

export async function translatedStream(
  adapter: ProviderAdapter,
  ir: GenerationRequest,
  ctx: CallContext,
  out: Outcome,
  headers: Record<string, string>,
  sse: SseOptions,
): Promise<Response> {
  let events!: AsyncIterator<StreamEvent>
  let first!: IteratorResult<StreamEvent>
  // Commit late: nothing is written until the upstream has produced its first event, so
  // a failure up to here is still an ordinary status code.
  try {
    events = (await adapter.stream(ir, ctx))[Symbol.asyncIterator]()
    first = await events.next()
    if (!first.done && first.value.type === 'error') throw first.value.error
  } catch (e) {
    const err = failureOf(e, out)
    out.record()
    throw err
  }
  const produced: string[] = []
  out.producedText = () => produced.join('')
  out.promptText = () => requestText(ir)
  const enc = createChatStreamEncoder({ id: out.id, model: ir.model, created: Math.floor(Date.now() / 1000), includeUsage: ir.includeUsage === true })
  const frames = (async function* () {
    try {
      for (let r = first; !r.done; r = await events.next()) {
        const ev = r.value
        if (ev.type === 'text-delta' || ev.type === 'reasoning-delta') produced.push(ev.text)
        else if (ev.type === 'tool-input-delta') produced.push(ev.delta)
        else if (ev.type === 'tool-input-start') produced.push(ev.name)
        const text = enc.push(ev)
        if (enc.state.produced) out.firstToken()
        if (ev.type === 'error') throw new MidStreamError(ev.error.message, ev.error.status)
        yield text
        if (enc.state.done) return
      }
      // The adapter ended without a finish: as much a failure as an error event.
      if (!enc.state.done) throw new MidStreamError('upstream stream ended before it finished', 502)
    } catch (e) {
      // Once the client has gone, whatever the adapter reports is the echo of our abort.
      const err = ctx.signal.aborted
        ? new MidStreamError('client disconnected', 499)
        : e instanceof MidStreamError
          ? e
          : new MidStreamError(String((e as Error)?.message ?? e), 502)
      out.fail(err.status, err.message)
      throw err
    } finally {
      out.id = enc.state.id
      out.usage = enc.state.usage
      out.finishReason = enc.state.finishReason
      await events.return?.(undefined)?.catch(() => {})
      out.record()
    }
  })()
  return new Response(sseBody(frames, sse), { status: 200, headers: { ...SSE_HEADERS, ...headers } })
}
