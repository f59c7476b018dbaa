// The one generation pipeline every surface (and the batch worker) runs through:
// decode (the surface: checks, model, family rules → a plan) → admission → adapter → media →
// pass-through relay or IR call → reply or stream → record. A surface brings only its
// decoder (SurfaceSpec, surface.ts); everything after works from the plan it returns.
import { premiumsOf } from '../config/claude-premiums.ts'
import { fileRefsOf, fileTokenBound } from '../billing/prompt-bound.ts'
import { HttpError } from '../http/errors.ts'
import type { CallContext } from '../routing/contract.ts'
import { addCompat, compatHeader } from '../routing/params.ts'
import type { GenerationSink } from '../generations/types.ts'
import type { GenerationServices, Services } from '../services.ts'
import type { RequestContext } from './context.ts'
import { GenerationOutcome } from './outcome.ts'
import { decodeContext, NO_MEDIA, type MediaResolver, type PassthroughPlan, type Plan, type SurfaceSpec } from './surface.ts'
import { candidates, type Candidate } from './failover.ts'
import { NO_WATCH, type AttemptWatch, type GenerationWatch } from './observe.ts'
import type { SurfaceCodec } from './codec.ts'
import { askOf, type Admission, type AdmitInput } from '../billing/admission.ts'
import { exceededWindow, retryable } from '../routing/choose.ts'
import { deploymentKey } from '../routing/health.ts'
import { UpstreamError } from '../ir/errors.ts'
import type { GenerationRequest } from '../ir/types.ts'
import { pastDeadline, retryAfterMs } from '../providers/http.ts'
import { relayJson, relayStream } from './relay.ts'
import { failureOf, jsonResponse, MidStreamError, type JsonReply } from './reply.ts'
import type { SseOptions } from './sse.ts'
import { translatedJson, translatedStream } from './translated.ts'
import { cacheFor } from '../cache/ask.ts'
import { checkContainers } from '../containers/check.ts'
import { TIERS, type ContainerCounts, type ContainerTier } from '../billing/containers.ts'

type Body = Record<string, unknown>

/** The token bound of the gateway files a plan's prompt names (its body and what it loaded), readable by the caller's key. */
export async function filesBound(s: Pick<Services, 'files'>, plan: Pick<Plan, 'body' | 'prompt'>, rc: RequestContext): Promise<number> {
  const refs = fileRefsOf(...(plan.prompt ?? [plan.body]))
  if ((refs.counts.size === 0 && !refs.more) || !s.files) return 0
  return fileTokenBound(refs, async (id) => {
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

/** What an attempt's watch is told of a call the response cache answered. */
const FROM_CACHE = { cached: true }

/** `sink` takes the generation's record (a batch item collects its own). */
/** No call was tried; its error is made only then (an error captures a stack, too dear for every request). */
const NOTHING_TRIED = Symbol('nothing tried')

async function run(s: GenerationServices, spec: SurfaceSpec, raw: unknown, rc: RequestContext, media: MediaResolver = s.media ?? NO_MEDIA, sink: GenerationSink = s.recorder): Promise<Response | JsonReply> {
  const cx = decodeContext(s.catalog, s.config.compat.crossFamily, rc)
  const plan = await spec.decode(raw, cx)
  // a container the key was not given holds another key's files: refused as a bad body is
  if (plan.containers?.length) await checkContainers(s.containers, rc.apiKey.id, plan.containers)
  const { model, body, stream, encoder: codec } = plan
  const headers: Record<string, string> = {}
  // with the limits still being taken, the watch begins once they allow the request: one they
  // refuse is the front door's 429, never a generation (no span, no generation metrics)
  let watch = rc.limits ? undefined : beginWatch(s, spec, plan, rc)

  let admission: Admission | undefined
  // what it may cost is held: a funded key's request here, a batch item's on the main thread (rc.holdAnew)
  const holds = rc.apiKey.credits !== null || rc.holdAnew !== undefined
  // a held reservation counts the files the request names too (their sizes, looked up)
  let files = 0
  const holdOf = (p: Plan): AdmitInput => ({ apiKey: rc.apiKey, model: p.model, promptTokens: () => p.promptTokens() + files, promptWrites: () => p.promptWrites(), maxOutputTokens: p.maxOutputTokens, choices: p.choices, serviceTier: p.serviceTier, premiums: p.premiums, beyond: p.beyond })
  const admit = (p: Plan) => s.billing.admit(holdOf(p))
  try {
    // records the database cannot take wait in memory, bounded: past the bound nothing more is served unrecorded
    if (sink.backlogged) throw new HttpError(507, `Insufficient storage: ${sink.backlogNote ?? 'generation records are waiting for the database to have room'}; nothing was sent upstream. Retry shortly`)
    if (holds) files = await filesBound(s, plan, rc)
    // the limits first, then the admission: asked in one turn, their calls go to Redis together
    const allowing = rc.limits?.allowed()
    const admitting = admit(plan)
    // both are under way; the limits' wait never rejects (PendingLimits), so it is awaited after
    // the admission, with no Promise.all around the two
    admission = admitting instanceof Promise ? await admitting : admitting
    if (allowing && !(await allowing)) {
      s.billing.release(admission)
      throw new HttpError(429, 'Rate limit exceeded')
    }
  } catch (e) {
    if (rc.limits && !(await rc.limits.allowed())) throw e
    watch ??= beginWatch(s, spec, plan, rc)
    watch.refused(statusOf(e), (e as Error)?.message ?? String(e))
    throw e
  }
  watch ??= beginWatch(s, spec, plan, rc)
  const out = new GenerationOutcome(sink, {
    apiKey: rc.apiKey, model, stream, endpoint: codec.endpoint, fallbackId: codec.fallbackId,
    reservationId: admission?.reservationId, batchId: rc.batchId, watch,
    asked: model.family === 'anthropic' ? premiumsOf({ speed: body.speed, inference_geo: body.inference_geo }) : undefined,
    inside: (e) => s.log.error('a generation failed inside the gateway', { request_id: rc.requestId, error: (e as Error)?.message ?? String(e) }),
  })
  // its hold stays while it runs, however long (renewed), and ends with its record
  let unkeep = s.billing.keep(admission)
  if (rc.apiKey.credits !== null) out.ended = () => unkeep()
  // the response cache, when the request or the config asks for it: its transport may answer each call
  const cache = cacheFor(s.config.cache, rc, model, body, { headers, out })
  // The request's deadline for reaching an upstream, failovers included: each attempt's own
  // timer ends it (providers/http.ts), so none starts after it and one still waiting for its
  // first byte ends at it with a 504. A reply that has begun is never cut by it.
  const deadline = { at: performance.now() + s.config.routing.deadlineMs, ms: s.config.routing.deadlineMs }
  // The upstream call's signal: the client's (a disconnect aborts the call); for a stream, also
  // ours (its body cancelled). One controller, not AbortSignal.any: combined signals were kept
  // alive past their request (about 10 KB a request, and a third of the throughput, in a closed loop).
  const abort = stream ? new AbortController() : undefined
  if (abort) {
    // when the gateway's stop cuts the connection, the reason says so (the stream's record)
    const onClient = () => abort.abort(s.cutting ? stopCut() : rc.signal.reason)
    if (rc.signal.aborted) onClient()
    else rc.signal.addEventListener('abort', onClient, { once: true })
    // open until its record: a stop whose grace runs out ends it with its error frame first
    if (s.streams) {
      s.streams.add(abort)
      out.ended = () => {
        unkeep()
        s.streams!.delete(abort)
      }
    }
  }
  const signal = abort?.signal ?? rc.signal
  // a container a reply hands the key becomes its own (one answered from the cache was another
  // request's, perhaps another key's: it hands none). One the key did not have yet was made for
  // this request, at the memory tier its code interpreter asked for: billed a session (its
  // record waits for the look at the grants, taken before this reply's own grant)
  const grants = s.containers
  const tier = heldTier(plan.beyond?.containers)
  const containerGiven =
    grants &&
    ((id: string, expiresAt?: number) => {
      if (out.cached) return
      // the reply's own grant is written only once that read has ended, never seen by it
      let read: Promise<Set<string>> | undefined
      if (tier) out.handedContainer(id, tier, () => (read = grants.given(rc.apiKey.id, [id], Date.now(), true)).then((had) => had.has(id)))
      grants.grant(rc.apiKey.id, id, expiresAt, read)
    })

  // what a plan becomes (its pass-through body, or its IR, with their media) is worked out once,
  // however many deployments it is sent to: they come one plan after another, so the last is kept
  let prepared: { plan: Plan; passthrough?: { plan: PassthroughPlan; body: Promise<Body> }; ir?: Promise<GenerationRequest> } | undefined

  /** One upstream call; a failure before its first byte is thrown unrecorded (the loop below decides). */
  const call = async (c: Candidate, attempt: AttemptWatch): Promise<Response | JsonReply> => {
    const adapter = s.providers.adapterFor(c.deployment.provider)
    const ctx: CallContext = {
      signal, deadline, model: c.model, requestId: rc.requestId, betas: rc.betas, lane: rc.apiKey.id, headers: attempt.headers, cache: c.plan.pauseAtTool ? undefined : cache,
      resent: attempt.resent && ((status, error, ms) => attempt.resent!(status, error, ms)),
      alternatives: plan.model.deployments.length > 1 || plan.model.fallbacks.length > 0,
      fallback: c.plan.model.id !== plan.model.id,
      // cassettes: the client's own file, and whether a recording answered
      cassette: rc.cassette, replayed: (how) => (out.replayed = how),
      // what the upstream's request leaves out is named as what the surface's rules left out is
      containerGiven,
      leftOut: (names) => {
        addCompat(c.plan.compat, names)
        nameCompat(c.plan, headers)
      },
    }
    if (prepared?.plan !== c.plan) prepared = { plan: c.plan }
    const p = prepared
    const pt = c.plan.pauseAtTool ? undefined : adapter.passthrough?.[spec.wire]
    if (pt && !('passthrough' in p)) {
      const plan = c.plan.passthrough(c.plan.model)
      p.passthrough = plan && { plan, body: media.passthrough(plan, rc) }
    }
    if (pt && p.passthrough) {
      const body = await p.passthrough.body
      nameCompat(c.plan, headers)
      const onTapError = (e: unknown) => s.log.error('pass-through tap failed; the reply goes on as the upstream sent it', { request_id: rc.requestId, error: String(e) })
      const tapOptions = containerGiven ? { ...p.passthrough.plan.tap, containerGiven } : p.passthrough.plan.tap
      const relay = { pt, body, tapOptions, ctx, out, headers, onTapError }
      return stream ? relayStream({ ...relay, sse: sseOptions(s, rc, codec, out, abort!) }) : relayJson(relay)
    }
    const ir = await (p.ir ??= media.ir(c.plan.ir(), rc, c.plan.model))
    nameCompat(c.plan, headers)
    const translated = { adapter, ir, codec: c.plan.encoder, ctx, out, headers, pauseAtTool: c.plan.pauseAtTool }
    return stream ? translatedStream({ ...translated, sse: sseOptions(s, rc, codec, out, abort!) }) : translatedJson(translated)
  }

  let failure: unknown = NOTHING_TRIED
  /** The plan the admission holds for. */
  let held = plan
  try {
    let failed: { key: string; retryAfterMs?: number } | undefined
    // a context window the prompt is known not to fit (an upstream said so): only a model of a
    // larger one is tried after it
    let beyond = 0
    // a model of one deployment and no fallbacks (the usual case) has its call as a list: walked
    // without a promise a step
    const list = candidates(s.health, s.catalog, spec, raw, plan, cx)
    const each: Iterator<Candidate> | AsyncIterator<Candidate> = Array.isArray(list) ? list.values() : list[Symbol.asyncIterator]()
    for (let next = each.next(); ; next = each.next()) {
      const step = next instanceof Promise ? await next : next
      if (step.done) break
      const c = step.value
      if (c.model.contextWindow <= beyond) {
        s.health.abandoned(deploymentKey(c.deployment))
        continue
      }
      // a fallback model is held anew at its own price (it is billed at it): a dearer one is not
      // served on a hold made for a cheaper one. One the credit (or the shared store) cannot hold
      // is not called: its probe is given back, and the request ends with the failure before it.
      // A batch item's is asked of the main thread, which holds the item (rc.holdAnew)
      if (c.plan !== held && holds) {
        held = c.plan
        unkeep()
        s.billing.release(admission)
        admission = undefined
        out.holding(undefined)
        try {
          const again = rc.holdAnew ? rc.holdAnew(askOf(holdOf(c.plan))) : admit(c.plan)
          admission = again instanceof Promise ? await again : again
        } catch {
          s.health.abandoned(deploymentKey(c.deployment))
          break
        }
        out.holding(admission?.reservationId)
        unkeep = s.billing.keep(admission)
      }
      // the call that failed before is a failover now: this one takes over
      if (failed) s.health.failed(failed.key, { retryAfterMs: failed.retryAfterMs, failover: true })
      failed = undefined
      out.retryWith(c.plan.model)
      rc.served = c.plan.model.id
      out.provider = c.deployment.provider
      out.deployment = c.deployment.upstreamId
      headers['x-switchyard-provider'] = c.deployment.provider
      const key = deploymentKey(c.deployment)
      const attempt = watch.attempt({ provider: c.deployment.provider, model: c.model })
      out.beginAttempt(c.deployment.provider)
      const t0 = performance.now()
      try {
        const reply = await call(c, attempt)
        const ms = Math.round(performance.now() - t0)
        out.endAttempt(reply.status)
        attempt.end(reply.status, undefined, out.cached ? FROM_CACHE : undefined)
        // an answer from the response cache says nothing of the deployment
        if (out.cached) s.health.abandoned(key)
        else s.health.succeeded(key, ms)
        return reply
      } catch (e) {
        failure = e
        // a call the client left is no upstream failure: 499, as its record says
        const status = signal.aborted ? 499 : statusOf(e)
        out.endAttempt(status)
        attempt.end(status, (e as Error)?.message ?? String(e), e instanceof UpstreamError ? { status: e.answeredWith, type: e.type } : undefined)
        // a prompt too long for this model is the request's, not the deployment's: a model of a
        // larger window may still take it (one of no larger window gets its 400, as before)
        const window = signal.aborted ? undefined : exceededWindow(e, c.model.contextWindow)
        if (window !== undefined) {
          s.health.abandoned(key)
          beyond = Math.max(beyond, window)
          continue
        }
        // a client that left, the deadline passed, or a failure that is not the deployment's (a request it refused): no other call
        if (signal.aborted || pastDeadline(e) || !retryable(e, s.config.routing.retryOn)) {
          s.health.abandoned(key)
          break
        }
        failed = { key, retryAfterMs: retryAfterOf(e) }
      }
    }
    if (failed) s.health.failed(failed.key, { retryAfterMs: failed.retryAfterMs })
  } catch (e) {
    // a failure before any call (a media source refused, an IR the upstream cannot take)
    failure = e
  }
  // The generation's end all the same: recorded, so its reservation is settled.
  const err = failureOf(failure === NOTHING_TRIED ? new HttpError(502, `no upstream could be tried for model ${model.id}`) : failure, out)
  out.record()
  throw err
}

function beginWatch(s: GenerationServices, spec: SurfaceSpec, plan: Plan, rc: RequestContext): GenerationWatch {
  const { model, stream, body } = plan
  return s.observe?.begin({ surface: spec.surface, model, stream, rc, maxTokens: plan.maxOutputTokens, temperature: numberOr(body.temperature), body }) ?? NO_WATCH
}

/** What a stream still open when the stop's grace ran out ends with. */
export const stopCut = () => new MidStreamError('the gateway stopped: its shutdown grace ran out before the stream ended', 503)

/**
 * A stream's options: its pings, its error frame, and a client that hung up (recorded as 499; the
 * upstream call aborted), or a stream the gateway cut at the end of its stop's grace (503).
 */
function sseOptions(s: Pick<GenerationServices, 'cutting'>, rc: RequestContext, codec: SurfaceCodec, out: GenerationOutcome, abort: AbortController): SseOptions {
  return {
    pingMs: rc.pingMs,
    errorFrame: codec.errorFrame,
    onCancel: () => {
      if (!s.cutting) {
        out.fail(499, 'client disconnected')
        return abort.abort()
      }
      const cut = stopCut()
      out.fail(cut.status, cut.message)
      abort.abort(cut)
    },
  }
}

/** The tier of the new container a request was held for (its code interpreter's in auto mode), if any. */
const heldTier = (held: ContainerCounts | undefined): ContainerTier | undefined => (held ? TIERS.find((t) => (held[t] ?? 0) > 0) : undefined)

/** The compat header is named once the body or IR is built: building them may add to it. */
function nameCompat(plan: Plan, headers: Record<string, string>) {
  const compat = compatHeader(plan.compat)
  if (compat) headers['x-switchyard-compat'] = compat
}

function statusOf(e: unknown): number {
  const status = (e as { status?: unknown })?.status
  return typeof status === 'number' ? status : 502
}

function numberOr(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined
}

function retryAfterOf(e: unknown): number | undefined {
  return e instanceof UpstreamError ? retryAfterMs(e.retryAfter) : undefined
}
