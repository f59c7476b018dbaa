// The IR path: any adapter answers, and the surface's codec writes its response or its
// events in the surface's wire. Streams get their block boundaries once (blockBoundaries).
import { ProducedText } from '../lib/produced-text.ts'
import { requestText } from '../ir/tokens.ts'
import { billedUsage, countTokensAsync } from '../tokens/count.ts'
import { roughCount } from '../ir/bounded-bpe.ts'

/** The longest prompt text a stream's start counts exactly (about 16,000 tokens of English). */
const START_COUNT = 64 * 1024
import { firstEventFailure } from '../ir/errors.ts'
import { blockBoundaries } from '../ir/blocks.ts'
import { eventText } from '../ir/event-text.ts'
import { pauseAtFirstTool, pauseResponseAtFirstTool } from '../ir/pause.ts'
import { promptTokens as promptCount, type GenerationRequest, type GenerationResponse, type StreamEvent, type Usage } from '../ir/types.ts'
import type { CallContext, ProviderAdapter } from '../routing/contract.ts'
import type { SurfaceCodec } from './codec.ts'
import type { GenerationOutcome } from './outcome.ts'
import { failureOf, midStreamFailure, MidStreamError, type JsonReply } from './reply.ts'
import { sseBody, SSE_HEADERS, type SseOptions } from './sse.ts'

export interface TranslatedInput {
  adapter: ProviderAdapter
  ir: GenerationRequest
  codec: SurfaceCodec
  ctx: CallContext
  out: GenerationOutcome
  headers: Record<string, string>
  /** Stop the reply at the first tool call (messages `pause_on_call_tools_start`). */
  pauseAtTool?: boolean
}

/**
 * A failure before the upstream answered is thrown as it came and not recorded: the caller
 * may try another deployment, and records the generation when it gives up (generate.ts).
 */
export async function translatedJson({ adapter, ir, codec, ctx, out, headers, pauseAtTool }: TranslatedInput): Promise<JsonReply> {
  out.promptText = () => requestText(ir)
  let r = await adapter.generate(ir, ctx)
  try {
    if (pauseAtTool) r = pauseResponseAtFirstTool(r)
    if (unsaid(r.usage)) r = { ...r, usage: await countedUsage(r.usage, producedOf(r), ir, ctx) }
    const enc = codec.encodeJson(r, r.model || ir.model)
    out.id = enc.id
    out.reply = enc.body
    out.usage = r.usage
    out.finishReason = enc.finishReason
    if (enc.status !== undefined) out.status = enc.status
    out.firstToken()
    await codec.durable?.()
    return { status: 200, body: enc.body, headers }
  } catch (e) {
    throw failureOf(e, out)
  } finally {
    out.record()
  }
}

export async function translatedStream(input: TranslatedInput & { sse: SseOptions }): Promise<Response> {
  const { adapter, ir, codec, ctx, out, headers, sse } = input
  let events!: AsyncIterator<StreamEvent>
  let first!: IteratorResult<StreamEvent>
  // Commit late: nothing is written until the upstream has produced its first event, so
  // a failure up to here is still an ordinary status code (thrown unrecorded, as above).
  out.promptText = () => requestText(ir)
  // a wire that says the prompt's size as the reply begins, from an upstream whose start says none
  // (another family's): counted while the upstream works, and used if ready when the upstream
  // answers (nearly always), else estimated; never waited for. A prompt past START_COUNT
  // characters is estimated (a quarter token a character): the token worker is not kept long
  // for a number the upstream gives at the end.
  let counted: number | undefined
  if (codec.promptAtStart && ctx.model.family !== 'anthropic' && ctx.model.provider !== 'mock') {
    const text = requestText(ir)
    if (text.length <= START_COUNT) void countTokensAsync(text, ctx.lane).then((n) => (counted = n), () => {})
  }
  // what the upstream sent is billed whether or not it reached the client: each event as it
  // comes from the adapter (before a block boundary holds any back), and what the adapter itself
  // held when the client left (`unsent`)
  const produced = new ProducedText()
  const source = await adapter.stream(ir, { ...ctx, unsent: (t) => produced.push(t) })
  events = (input.pauseAtTool ? pauseAtFirstTool(source) : source)[Symbol.asyncIterator]()
  first = await events.next()
  const failure = first.done ? firstEventFailure({ done: true }) : first.value.type === 'error' ? firstEventFailure({ error: first.value.error }) : undefined
  if (failure) {
    await events.return?.(undefined)?.catch(() => {})
    throw failure
  }
  out.producedText = () => produced.text()
  const start = first.value.type === 'start' ? first.value : undefined
  const promptTokens = codec.promptAtStart && !start?.usage ? (counted ?? roughCount(requestText(ir))) : undefined
  // the model as the upstream names it (a snapshot: `gpt-4o-2024-08-06`), as the JSON reply says it
  const enc = codec.streamEncoder({ id: out.id, model: start?.model || ir.model, created: Math.floor(Date.now() / 1000), includeUsage: ir.includeUsage === true, promptTokens })
  // One event's frames, block boundaries included; an error event is the last of its frames.
  let text = ''
  let failed: MidStreamError | undefined
  const blocks = blockBoundaries((ev) => {
    // (an event's one frame is taken as it is: `'' + frame` would make a rope of it here)
    const frame = enc.push(ev)
    if (frame !== '') text = text === '' ? frame : text + frame
    if (ev.type === 'error') failed = new MidStreamError(ev.error.message, ev.error.status, ev.error.type)
  })
  const frames = (async function* () {
    try {
      for (let r = first; !r.done; r = await events.next()) {
        text = ''
        // the prompt's counts an upstream said at its start only (Claude's message_start, then 0
        // at its end) are the finish's; one that said none anywhere (one that ignores
        // include_usage): the client's last frames carry the gateway's count, as the record
        // does, never 0 tokens
        if (r.value.type === 'finish') {
          const usage = withStart(r.value.usage, start)
          r = { done: false, value: { ...r.value, usage: unsaid(usage) ? await countedUsage(usage, produced.text(), ir, ctx) : usage } }
        }
        const said = eventText(r.value)
        if (said !== '') produced.push(said)
        try {
          blocks(r.value)
        } catch (e) {
          // the frames of the events encoded before the one that threw are whole: sent, so that
          // the failure's frames follow them (a Responses stream numbers its events on from them)
          if (text) yield text
          throw e
        }
        if (failed) {
          if (text) yield text
          throw failed
        }
        if (enc.state.produced) out.firstToken()
        if (enc.state.done) {
          out.complete()
          await codec.durable?.()
        }
        yield text
        if (enc.state.done) return
      }
      // The adapter ended without a finish: as much a failure as an error event.
      if (!enc.state.done) throw new MidStreamError('upstream stream ended before it finished', 502)
    } catch (e) {
      const err = midStreamFailure(e, ctx.signal, out)
      out.fail(err.status, err.message)
      throw err
    } finally {
      out.id = enc.state.id
      out.usage = withStart(enc.state.usage, start)
      out.finishReason = enc.state.finishReason
      if (enc.state.status !== undefined) out.status = enc.state.status
      await events.return?.(undefined)?.catch(() => {})
      out.record()
    }
  })()
  return new Response(sseBody(frames, sse), { status: 200, headers: { ...SSE_HEADERS, ...headers } })
}

/** Usage an upstream did not say: no prompt is 0 tokens (the mock counts its own). */
const unsaid = (u: Usage) => promptCount(u) === 0

/** What a reply's model wrote: its output tokens are counted from it (as a stream's deltas are). */
function producedOf(r: GenerationResponse): string {
  return r.content.map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : p.type === 'tool-call' ? p.name + p.arguments : '')).join('')
}

/** The gateway's count of a reply the upstream gave no usage for (the record's, outcome.ts), marked counted. */
async function countedUsage(u: Usage, produced: string, ir: GenerationRequest, ctx: CallContext): Promise<Usage> {
  const usage = await billedUsage(u, produced, () => requestText(ir), ctx.lane).catch(() => u)
  return usage === u ? u : { ...usage, counted: true }
}

/**
 * A stream's usage: the encoder's, with what the upstream said at its start where its end never
 * came (a stream cut short): the prompt's counts (Claude's message_start), the tier serving it.
 */
function withStart(u: Usage, start: Extract<StreamEvent, { type: 'start' }> | undefined): Usage {
  if (!start) return u
  let out = u
  const said = start.usage
  if (said && unsaid(out)) {
    out = { ...out, inputTokens: said.inputTokens, cacheReadTokens: said.cacheReadTokens, cacheWriteTokens: said.cacheWriteTokens }
    if (said.cacheWrite1hTokens) out.cacheWrite1hTokens = said.cacheWrite1hTokens
  }
  if (start.serviceTier && !out.serviceTier) out = { ...out, serviceTier: start.serviceTier }
  return out
}
