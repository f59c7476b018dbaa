// The one generation pipeline every surface (and the batch worker) runs through:
// decode → resolve the model → family rules → admission → adapter → media → pass-through
// relay or IR call → reply or stream → record. A surface brings only what is its own
// (SurfaceSpec, surface.ts): its parameter checks, its IR mapping, its wire encoders.
import { fileIdsOf, fileTokenBound, promptBound } from '../billing/prompt-bound.ts'
import { HttpError } from '../http/errors.ts'
import type { CallContext } from '../routing/contract.ts'
import { resolveModel } from '../routing/router.ts'
import { applyFamilyRules, compatHeader } from '../routing/params.ts'
import type { Services } from '../services.ts'
import type { RequestContext } from './context.ts'
import { GenerationOutcome } from './outcome.ts'
import { NO_MEDIA, type MediaResolver, type SurfaceSpec } from './surface.ts'
import { relayJson, relayStream } from './relay.ts'
import { failureOf } from './reply.ts'
import type { SseOptions } from './sse.ts'
import { translatedJson, translatedStream } from './translated.ts'

type Body = Record<string, unknown>

/** The token bound of the gateway files a body names, readable by the caller's key. */
export async function filesBound(s: Services, body: Body, rc: RequestContext): Promise<number> {
  const ids = fileIdsOf(body)
  if (ids.length === 0 || !s.files) return 0
  return fileTokenBound(ids, async (id) => {
    const f = await s.files.resolveForKey(id, rc.apiKey).catch(() => null)
    return f ? { bytes: f.bytes, image: f.mimeType.startsWith('image/') } : null
  })
}

export async function generate(s: Services, spec: SurfaceSpec, raw: unknown, rc: RequestContext, media: MediaResolver = s.media ?? NO_MEDIA): Promise<Response> {
  const body = spec.normalize(raw)
  const model = resolveModel(s.catalog, body.model, spec.surface)
  rc.onModel?.(model.id)
  await spec.validate(body, model, rc)
  const rules = applyFamilyRules(body, spec.params, model.family, s.config.compat.crossFamily, model.id)
  const adapter = s.providers.providerFor(model)

  const codec = spec.codecFor?.(body, model, rc) ?? spec.codec
  // The compat header is named once the body or IR is built: the surface may add to it.
  const headers: Record<string, string> = {}
  const nameCompat = () => {
    const compat = compatHeader(rules.compat)
    if (compat) headers['x-switchyard-compat'] = compat
  }

  // records the database cannot take wait in memory, bounded: past the bound nothing more is served unrecorded
  if (s.recorder.backlogged) throw new HttpError(507, 'Insufficient storage: generation records are waiting for the database to have room; nothing was sent upstream. Retry shortly')
  const stream = body.stream === true
  // a funded key's reservation counts the files the request names too (their sizes, looked up)
  const files = rc.apiKey.credits !== null ? await filesBound(s, body, rc) : 0
  const admitInput = { apiKey: rc.apiKey, model, promptTokens: () => promptBound(spec, body) + files, maxOutputTokens: spec.maxOutputTokens(body) }
  const admitting = s.billing.admit(admitInput)
  const admission = admitting instanceof Promise ? await admitting : admitting
  const out = new GenerationOutcome(s.recorder, {
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

  const pauseAtTool = spec.pauseAtTool?.(body) === true
  const pt = pauseAtTool ? undefined : adapter.passthrough?.[spec.wire]
  try {
    const plan = pt && spec.passthrough(body, rules, model, rc)
    if (pt && plan) {
      nameCompat()
      const onTapError = (e: unknown) => s.log.error('pass-through tap failed; the reply goes on as the upstream sent it', { request_id: rc.requestId, error: String(e) })
      const relay = { pt, body: await media.passthrough(spec.wire, plan.body, rc), tapOptions: plan.tap, ctx, out, headers, onTapError }
      return await (stream ? relayStream({ ...relay, sse }) : relayJson(relay))
    }
    const ir = await media.ir(spec.toIR(body, model, rules), rc, model)
    nameCompat()
    const call = { adapter, ir, codec, ctx, out, headers, pauseAtTool }
    return await (stream ? translatedStream({ ...call, sse }) : translatedJson(call))
  } catch (e) {
    // A failure before the call (a media source refused, an IR the upstream cannot take) is
    // still this generation's end: recorded, so its reservation is settled.
    const err = failureOf(e, out)
    out.record()
    throw err
  }
}
