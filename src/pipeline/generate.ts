// The one generation pipeline every surface (and the batch worker) runs through:
// decode (the surface: checks, model, family rules → a plan) → admission → adapter → media →
// pass-through relay or IR call → reply or stream → record. A surface brings only its
// decoder (SurfaceSpec, surface.ts); everything after works from the plan it returns.
import { fileIdsOf, fileTokenBound } from '../billing/prompt-bound.ts'
import { HttpError } from '../http/errors.ts'
import type { CallContext } from '../routing/contract.ts'
import { compatHeader } from '../routing/params.ts'
import type { GenerationSink } from '../generations/types.ts'
import type { GenerationServices, Services } from '../services.ts'
import type { RequestContext } from './context.ts'
import { GenerationOutcome } from './outcome.ts'
import { decodeContext, NO_MEDIA, type MediaResolver, type SurfaceSpec } from './surface.ts'
import { relayJson, relayStream } from './relay.ts'
import { failureOf, jsonResponse, type JsonReply } from './reply.ts'
import type { SseOptions } from './sse.ts'
import { translatedJson, translatedStream } from './translated.ts'

type Body = Record<string, unknown>

/** The token bound of the gateway files a body names, readable by the caller's key. */
export async function filesBound(s: Pick<Services, 'files'>, body: Body, rc: RequestContext): Promise<number> {
  const ids = fileIdsOf(body)
  if (ids.length === 0 || !s.files) return 0
  return fileTokenBound(ids, async (id) => {
    const f = await s.files.resolveForKey(id, rc.apiKey).catch(() => null)
    return f ? { bytes: f.bytes, image: f.mimeType.startsWith('image/') } : null
  })
}

/** A request through the pipeline, answered over HTTP: a stream, or the JSON reply. */
export async function generate(s: GenerationServices, spec: SurfaceSpec, raw: unknown, rc: RequestContext, media?: MediaResolver): Promise<Response> {
  const r = await run(s, spec, raw, rc, media)
  return r instanceof Response ? r : jsonResponse(r)
}

/** A request that is never streamed (a batch item): its reply as a value, not an HTTP response. */
export async function generateJson(s: GenerationServices, spec: SurfaceSpec, raw: Record<string, unknown>, rc: RequestContext, sink: GenerationSink = s.recorder): Promise<JsonReply> {
  const r = await run(s, spec, raw.stream === true ? { ...raw, stream: false } : raw, rc, s.media ?? NO_MEDIA, sink)
  if (r instanceof Response) throw new Error('a non-streaming request was answered with a stream')
  return r
}

/** `sink` takes the generation's record (a batch item collects its own). */
async function run(s: GenerationServices, spec: SurfaceSpec, raw: unknown, rc: RequestContext, media: MediaResolver = s.media ?? NO_MEDIA, sink: GenerationSink = s.recorder): Promise<Response | JsonReply> {
  const plan = await spec.decode(raw, decodeContext(s.catalog, s.config.compat.crossFamily, rc))
  const { model, body, stream, encoder: codec } = plan
  const adapter = s.providers.providerFor(model)
  // The compat header is named once the body or IR is built: building them may add to it.
  const headers: Record<string, string> = {}
  const nameCompat = () => {
    const compat = compatHeader(plan.compat)
    if (compat) headers['x-switchyard-compat'] = compat
  }

  // records the database cannot take wait in memory, bounded: past the bound nothing more is served unrecorded
  if (sink.backlogged) throw new HttpError(507, 'Insufficient storage: generation records are waiting for the database to have room; nothing was sent upstream. Retry shortly')
  // a funded key's reservation counts the files the request names too (their sizes, looked up)
  const files = rc.apiKey.credits !== null ? await filesBound(s, body, rc) : 0
  const admitting = s.billing.admit({ apiKey: rc.apiKey, model, promptTokens: () => plan.promptTokens() + files, maxOutputTokens: plan.maxOutputTokens })
  const admission = admitting instanceof Promise ? await admitting : admitting
  const out = new GenerationOutcome(sink, {
    apiKey: rc.apiKey, model, stream, endpoint: codec.endpoint, fallbackId: codec.fallbackId(),
    reservationId: admission?.reservationId, batchId: rc.batchId,
  })
  // One signal for the upstream call: the client's own (a disconnect aborts it), and for a
  // stream ours too, raised when the response body is cancelled. A JSON reply has no body
  // to cancel: the client's signal serves as it is.
  const abort = stream ? new AbortController() : undefined
  if (abort) {
    if (rc.signal.aborted) abort.abort()
    else rc.signal.addEventListener('abort', () => abort.abort(), { once: true })
  }
  const ctx: CallContext = { signal: abort?.signal ?? rc.signal, model, requestId: rc.requestId, betas: rc.betas, lane: rc.apiKey.id }
  const sse: SseOptions = {
    pingMs: rc.pingMs,
    errorFrame: codec.errorFrame,
    onCancel: () => {
      out.fail(499, 'client disconnected')
      abort?.abort()
    },
  }

  const pt = plan.pauseAtTool ? undefined : adapter.passthrough?.[spec.wire]
  try {
    const passthrough = pt && plan.passthrough()
    if (pt && passthrough) {
      nameCompat()
      const onTapError = (e: unknown) => s.log.error('pass-through tap failed; the reply goes on as the upstream sent it', { request_id: rc.requestId, error: String(e) })
      const relay = { pt, body: await media.passthrough(passthrough, rc), tapOptions: passthrough.tap, ctx, out, headers, onTapError }
      return await (stream ? relayStream({ ...relay, sse }) : relayJson(relay))
    }
    const ir = await media.ir(plan.ir(), rc, model)
    nameCompat()
    const call = { adapter, ir, codec, ctx, out, headers, pauseAtTool: plan.pauseAtTool }
    return await (stream ? translatedStream({ ...call, sse }) : translatedJson(call))
  } catch (e) {
    // A failure before the call (a media source refused, an IR the upstream cannot take) is
    // still this generation's end: recorded, so its reservation is settled.
    const err = failureOf(e, out)
    out.record()
    throw err
  }
}
