// What a generation ended as, gathered while it runs and handed to the recorder once,
// after the last byte (never before: recording must not delay the response).
import type { Premiums } from '../config/claude-premiums.ts'
import type { ApiKey } from '../http/context.ts'
import type { CatalogModel } from '../config/catalog.ts'
import type { Endpoint, GenerationInput, GenerationSink, UpstreamAttempt } from '../generations/types.ts'
import { billedUsage, roughBilledUsage } from '../tokens/count.ts'
import { searchesEachReply } from '../billing/server-tools.ts'
import { emptyUsage, promptTokens, type Usage } from '../ir/types.ts'
import type { GenerationWatch } from './observe.ts'
import { newGenerationId, plausibleUsage } from '../generations/row.ts'
import { addContainer, type ContainerTier } from '../billing/containers.ts'

export interface OutcomeBase {
  apiKey: ApiKey
  model: CatalogModel
  stream: boolean
  endpoint: Endpoint
  /**
   * The id used until the upstream names the generation (failures before that keep it): made
   * only when read before then, since nearly every upstream names its reply.
   */
  fallbackId: () => string
  reservationId?: string
  batchId?: string
  /** Told the record once it is final (metrics, traces). */
  watch?: GenerationWatch
  /** How the request asked to be served where that is priced apart (Anthropic's fast mode, US-only inference): a reply that never said is billed so. */
  asked?: Premiums
  /** Told of a failure inside the gateway (a bug, a database's error): its words go to the log, never to the client or the record. */
  inside?: (e: unknown) => void
}

const NO_TEXT = () => ''

/** Where a JSON reply of any wire keeps what the model wrote: text, tool arguments and inputs, thinking. */
const WRITTEN = new Set(['content', 'text', 'arguments', 'refusal', 'thinking', 'input'])

/** The text a JSON reply holds (relayed as text, or built): what its output tokens are counted from. */
function replyText(reply: string | Record<string, unknown> | undefined): string {
  if (reply === undefined) return ''
  if (typeof reply === 'string') {
    try {
      return replyText(JSON.parse(reply) as Record<string, unknown>)
    } catch {
      return reply
    }
  }
  const out: string[] = []
  const walk = (v: unknown, key: string | undefined, depth: number): void => {
    if (depth > 32) return
    if (typeof v === 'string') {
      if (key !== undefined && WRITTEN.has(key)) out.push(v)
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, key, depth + 1)
    } else if (v !== null && typeof v === 'object') {
      // a tool's input object is written by the model whole
      if (key === 'input') return void out.push(JSON.stringify(v))
      for (const [k, x] of Object.entries(v)) walk(x, k, depth + 1)
    }
  }
  walk(reply, undefined, 0)
  return out.join('')
}

export class GenerationOutcome {
  private named?: string
  usage: Usage = emptyUsage()
  finishReason: string | null = null
  /** Responses-style status (completed, requires_action, incomplete, failed). */
  status: string | null = null
  ttftMs: number | null = null
  error: string | null = null
  httpStatus = 200
  /** What a stream relayed so far, and the prompt: read only when it ends early. */
  producedText: () => string = NO_TEXT
  promptText: () => string = NO_TEXT
  /** The upstream answered (a stream's first event came) and did not report a failure of its own: it has the prompt, whatever follows. */
  accepted = false
  /** A JSON reply as it went out: what an observer exporting content reads (a stream's is producedText). */
  reply?: string | Record<string, unknown>
  /** Which deployment serves (set as each is tried), and the calls tried before it. */
  provider?: string
  deployment?: string
  attempts: UpstreamAttempt[] = []
  /** The upstream call under way: its provider (none: no call) and when it began. */
  private currentProvider?: string
  private currentT0 = 0
  /** The serving call was answered from the response cache: recorded as cached, at no cost. */
  cached = false
  /** The serving call was answered from a cassette (src/replay): recorded as replayed, at no cost unless billed. */
  replayed?: { billed: boolean }
  /** Told once, at the record, whether the generation succeeded (the response cache keeps an answer only then). */
  onRecord?: (ok: boolean) => void
  /** Told once, at the record: the generation has ended (the gateway's list of open streams). */
  ended?: () => void
  private recorded = false
  /**
   * The code-interpreter containers the reply handed the key, each with whether the key had it
   * before (asked of its grants as it was handed): one it had was reused, and costs nothing more.
   */
  private handed?: Map<string, Promise<boolean>>
  /** The memory tier a new container of the request is made at (its auto code interpreter's). */
  private containerTier?: ContainerTier

  /** A reply handed container `id`; `before`: whether the key had been given it already. Asked once an id. */
  handedContainer(id: string, tier: ContainerTier, before: () => Promise<boolean>): void {
    this.handed ??= new Map()
    if (this.handed.has(id)) return
    this.containerTier = tier
    this.handed.set(id, before().catch(() => false))
  }

  /** How many of the containers handed were new (one whose check failed counts as new): undefined when none was handed or none is billed. */
  private newContainers(): Promise<number> | undefined {
    if (!this.handed?.size || this.cached || (this.replayed !== undefined && !this.replayed.billed)) return undefined
    return Promise.all(this.handed.values()).then((had) => had.filter((h) => !h).length)
  }

  /** `input` with `n` new containers counted in its usage. */
  private withContainers(input: GenerationInput, n: number): GenerationInput {
    return n > 0 && this.containerTier ? { ...input, usage: { ...input.usage, containers: addContainer(input.usage.containers, this.containerTier, n) } } : input
  }
  private completed = false
  private readonly createdAt = Date.now()
  private readonly t0 = performance.now()
  private endedAt?: number

  constructor(private readonly sink: GenerationSink | undefined, private readonly base: OutcomeBase) {}

  get id(): string {
    return (this.named ??= this.base.fallbackId())
  }

  set id(id: string) {
    this.named = id
  }

  firstToken() {
    this.ttftMs ??= Math.round(performance.now() - this.t0)
  }

  /**
   * Whether the record may be made after the reply is handed over: the request path's recorder
   * takes records on the next turn anyway; a batch item reads its records as soon as the reply is read.
   */
  get defersRecord(): boolean {
    return this.sink?.later !== undefined
  }

  /** Record after `read` has filled in what the reply says, on the sink's next turn (defersRecord). */
  recordAfter(read: () => void): void {
    if (!this.sink?.later) {
      read()
      return this.record()
    }
    this.sink.later(() => {
      try {
        read()
      } finally {
        this.record()
      }
    })
  }

  /** The reply is handed over: its latency ends here even when the record is made a little later. */
  end() {
    this.endedAt ??= performance.now()
  }

  /** The surface's terminator went out: a client that hangs up after it lost nothing. */
  complete() {
    this.completed = true
  }

  /**
   * The next deployment (or a fallback model) is tried after a failure before the first byte:
   * that failure is one of the attempts, not this generation's end.
   */
  retryWith(model: CatalogModel) {
    this.error = null
    this.httpStatus = 200
    this.base.model = model
  }

  /** The request's reservation is now this one (a fallback model held anew at its own price). */
  holding(reservationId: string | undefined) {
    this.base.reservationId = reservationId
  }

  /** An upstream call begins (one of the attempts). */
  beginAttempt(provider: string) {
    this.currentProvider = provider
    this.currentT0 = performance.now()
  }

  /** The call under way ended: answered with `status` (200 once accepted) or failed before its first byte. */
  endAttempt(status: number) {
    const provider = this.currentProvider
    if (provider === undefined) return
    this.currentProvider = undefined
    this.attempts.push({ provider, status, ms: Math.round(performance.now() - this.currentT0) })
  }

  /** A failure inside the gateway, for the log (what the client is told says only that it happened). */
  failedInside(e: unknown) {
    this.base.inside?.(e)
  }

  fail(status: number, message: string) {
    if (this.completed) return
    this.httpStatus = status
    this.error = message
  }

  record() {
    if (this.recorded || !this.sink) return
    this.recorded = true
    // recorded inside the call (a JSON reply): the call that served is one of the attempts too
    this.endAttempt(this.httpStatus)
    this.onRecord?.(this.error === null)
    this.ended?.()
    // usage no reply can have (an upstream's 1e308, a negative count) is not the upstream's word:
    // counted as one that said none, on the gateway's own count below
    if (plausibleUsage(this.usage).implausible.length > 0) this.usage = { ...emptyUsage(), ...servedAs(this.usage) }
    // A stream that failed or was dropped after output is billed for what was produced, and a
    // call the client left while the upstream had its prompt (a JSON reply awaited, a stream
    // before its first event), or a stream that failed after its upstream answered but before
    // any output (a Responses stream stalled after response.created), for that prompt, which
    // the upstream bills; the count runs in the token worker, so the record follows it by a few ms.
    const billDropped = this.error !== null && (this.ttftMs !== null || ((this.httpStatus === 499 || this.accepted) && this.promptText !== NO_TEXT))
    // a search model's request is billed its search, which its usage never reports (once the
    // upstream had the request: answered, or dropped while it was at work)
    const searches = searchesEachReply(this.base.model)
    if (searches > 0 && !this.usage.webSearches && !this.cached && this.replayed === undefined && (this.error === null || billDropped)) this.usage = { ...this.usage, webSearches: searches }
    // An upstream that answered without usage (a stream whose usage never came, one that ignores
    // include_usage) is billed on the same estimate, never recorded as free: no prompt is 0 tokens.
    const unreported = this.error === null && !this.cached && this.replayed === undefined && this.promptText !== NO_TEXT && promptTokens(this.usage) === 0
    // a reply that said nothing of itself (dropped before its usage, or none sent) is billed in the
    // mode the request asked for, which a Claude model serves or refuses, never serves otherwise
    if ((billDropped || unreported) && promptTokens(this.usage) === 0 && this.base.model.family === 'anthropic' && this.base.asked) this.usage = { ...this.usage, ...this.base.asked, ...servedAs(this.usage) }
    const input: GenerationInput = {
      id: this.id,
      apiKey: this.base.apiKey,
      endpoint: this.base.endpoint,
      stream: this.base.stream,
      model: this.base.model,
      createdAt: this.createdAt,
      usage: this.usage,
      finishReason: this.finishReason,
      status: this.base.endpoint === 'openai.responses' ? (this.error !== null ? 'failed' : this.status) : null,
      latencyMs: Math.round((this.endedAt ?? performance.now()) - this.t0),
      ttftMs: this.ttftMs,
      error: this.error,
      httpStatus: this.httpStatus,
      reservationId: this.base.reservationId,
      batchId: this.base.batchId ?? null,
      provider: this.provider,
      deployment: this.deployment ?? null,
      attempts: this.attempts,
      recordId: newGenerationId(),
      cached: this.cached,
      replayed: this.replayed,
    }
    const watch = this.base.watch
    const reply = () => this.reply ?? this.producedText()
    const whose = { keyId: this.base.apiKey.id, account: this.base.apiKey.account }
    // a container the reply made is billed a session: whether the key had it is read from its grants first
    const fresh = this.newContainers()
    const every = this.handed?.size ?? 0
    if (!billDropped && !unreported) {
      if (!fresh) {
        watch?.end(input, reply)
        return this.sink.recordSoon ? this.sink.recordSoon(input) : this.sink.record(input)
      }
      const later = fresh.then((n) => this.withContainers(input, n))
      if (watch) void later.then((final) => watch.end(final, reply))
      // a stop that cannot wait counts each as new, the dearer reading
      return this.sink.recordLater(later, () => this.withContainers(input, every), whose)
    }
    const produced = this.producedText !== NO_TEXT ? this.producedText() : replyText(this.reply)
    // the upstream said nothing of the prompt: what the record holds is the gateway's count, and says so
    const noInput = promptTokens(this.usage) === 0
    const withCounts = (usage: Usage): GenerationInput => ({ ...input, usage: noInput ? { ...usage, counted: true as const } : usage })
    const tokens = billedUsage(this.usage, produced, this.promptText, this.base.apiKey.id).then(withCounts, () => input)
    const counted = fresh ? Promise.all([tokens, fresh]).then(([i, n]) => this.withContainers(i, n)) : tokens
    if (watch) void counted.then((final) => watch.end(final, reply))
    // the same at the cheap bound, for a stop that cannot wait for the count
    this.sink.recordLater(counted, () => this.withContainers(withCounts(roughBilledUsage(this.usage, produced, this.promptText)), fresh ? every : 0), whose)
  }
}

/** How a reply was served where that is priced apart (its tier, fast mode, US-only inference): kept when its counts are not. */
function servedAs(u: Usage): Partial<Usage> {
  const out: Partial<Usage> = {}
  if (u.serviceTier) out.serviceTier = u.serviceTier
  if (u.speed) out.speed = u.speed
  if (u.inferenceGeo) out.inferenceGeo = u.inferenceGeo
  return out
}
