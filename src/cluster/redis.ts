// The shared Redis of several gateway instances, through Bun's RedisClient.
// Bun's defaults would queue commands while the server is away and retry for about 31 s;
// a request must get an answer within a second instead. So: no offline queue, no automatic
// reconnect, a short connect timeout and a deadline on every command. Reconnecting is ours:
// the next command (or the 1 s health check) opens a new connection, at most one at a time.
import { RedisClient } from 'bun'
import type { RedisSettings } from '../config/load.ts'
import type { Logger } from '../http/log.ts'

/** Redis could not answer in time: the caller refuses (503) or falls back, per `redis.on_error`. */
export class RedisUnavailable extends Error {
  constructor(reason: string) {
    super(`Redis unavailable: ${reason}`)
    this.name = 'RedisUnavailable'
  }
}

/** A Lua script run by EVALSHA; loaded again when the server answers NOSCRIPT (a restart, SCRIPT FLUSH). */
export interface Script {
  source: string
  sha: string
}

export function script(source: string): Script {
  return { source, sha: new Bun.CryptoHasher('sha1').update(source).digest('hex') }
}

/** After a failed connect, commands fail at once for this long instead of each opening a socket. */
const RETRY_AFTER_MS = 200
const HEALTH_EVERY_MS = 1_000
const DEGRADED_LOG_EVERY_MS = 60_000
/** A deadline timer this late means the instance's loop was busy, not that Redis is slow. */
const STALL_MS = 100

export interface RedisOptions {
  /** Called when the server comes back after being unreachable (caches may have missed messages). */
  onRecover?: () => void
}

export class SharedRedis {
  private client: RedisClient | null = null
  private connecting: Promise<RedisClient> | null = null
  private failedAt = 0
  private lastError = ''
  /** Epoch ms since when Redis has been unreachable; null while it answers. */
  downSince: number | null = null
  private readonly health: ReturnType<typeof setInterval>
  private readonly recoverHooks: (() => void)[] = []
  private closed = false

  constructor(readonly settings: RedisSettings, private readonly log: Logger) {
    // a quiet instance notices an outage (and its end) without waiting for a request; one whose
    // commands were answered within the period knows the connection works, and sends nothing
    this.health = setInterval(this.check, HEALTH_EVERY_MS)
    this.health.unref?.()
  }

  /** A command was answered since the last check (a flag, not a clock read on every command). */
  private answered = false

  /** Redis's time (ms) as its last health check read it: when this instance last heard from it, on its clock. */
  heardAt = 0

  private readonly check = () => {
    const quiet = !this.answered
    this.answered = false
    if (this.downSince === null && this.client?.connected && !quiet) return
    // TIME rather than PING: as cheap, and it dates the last word (billing's owed costs)
    void this.send('TIME', [], true).then(
      (t) => {
        const [s, us] = t as [string, string]
        const at = Number(s) * 1000 + Math.floor(Number(us) / 1000)
        if (at > this.heardAt) this.heardAt = at
      },
      () => this.degraded(),
    )
  }

  private lastDegradedLog = 0

  /**
   * With `on_error: allow`, requests go on on this instance's own limits while Redis is away:
   * said in a log line once a minute for as long as it lasts (with or without traffic).
   */
  degraded() {
    if (this.settings.onError !== 'allow' || this.closed) return
    const now = Date.now()
    if (now - this.lastDegradedLog < DEGRADED_LOG_EVERY_MS) return
    this.lastDegradedLog = now
    this.log.warn('redis: unreachable; rate limits and credits are per instance until it returns (redis.on_error: allow)', { error: this.lastError, down_since: this.downSince && new Date(this.downSince).toISOString() })
  }

  onRecover(hook: () => void) {
    this.recoverHooks.push(hook)
  }

  /** A new client with the fail-fast options: the same settings serve the subscriber connection. */
  newClient(): RedisClient {
    return new RedisClient(this.settings.url, {
      connectionTimeout: this.settings.timeoutMs,
      autoReconnect: false,
      maxRetries: 0,
      enableOfflineQueue: false,
    })
  }

  private connected(): Promise<RedisClient> {
    if (this.client?.connected) return Promise.resolve(this.client)
    if (this.closed) return Promise.reject(new RedisUnavailable('the gateway is shutting down'))
    if (this.connecting) return this.connecting
    if (Date.now() - this.failedAt < RETRY_AFTER_MS) return Promise.reject(new RedisUnavailable(this.lastError))
    this.client?.close()
    const c = this.newClient()
    this.connecting = c
      .connect()
      .then(() => {
        this.client = c
        return c
      })
      .catch((e) => {
        c.close()
        // only a real attempt starts the quiet period: fast refusals must not extend it
        this.failedAt = Date.now()
        throw this.failed(e)
      })
      .finally(() => {
        this.connecting = null
      })
    return this.connecting
  }

  private failed(e: unknown): RedisUnavailable {
    const reason = e instanceof RedisUnavailable ? e.message.replace(/^Redis unavailable: /, '') : String((e as Error)?.message ?? e)
    this.lastError = reason
    if (this.downSince === null) {
      this.downSince = Date.now()
      this.log.error('redis: unreachable', { error: reason, on_error: this.settings.onError })
    }
    return e instanceof RedisUnavailable ? e : new RedisUnavailable(reason)
  }

  private up() {
    if (this.downSince === null) return
    this.log.warn('redis: reachable again', { down_ms: Date.now() - this.downSince })
    this.downSince = null
    this.lastDegradedLog = 0
    for (const h of this.recoverHooks) h()
  }

  /**
   * One command within the deadline, or RedisUnavailable. A server's own error (a bad script)
   * is rethrown as is. `drop`: a command that times out also drops the connection, so that the
   * next one opens a fresh socket (the health check's PING does this; a request's command does
   * not, lest one slow answer cut off every other command in flight on the connection).
   */
  async send(cmd: string, args: string[], drop = false): Promise<unknown> {
    // the answer or the deadline, whichever comes first: the deadline is the instance's one
    // timer (watch), not a timer, a promise and a race of each command's own
    const answer = Promise.withResolvers<unknown>()
    const waiting = this.watch(answer.reject)
    try {
      // connected (nearly always): the command goes at once, with no promise in front of it
      const c = this.client
      const run = c?.connected ? c.send(cmd, args) : this.connected().then((c) => c.send(cmd, args))
      run.then(answer.resolve, answer.reject)
      const out = await answer.promise
      this.answered = true
      this.up()
      return out
    } catch (e) {
      if (isServerError(e)) {
        this.up()
        throw e
      }
      if (drop && e instanceof RedisUnavailable && this.client) {
        this.client.close()
        this.client = null
      }
      throw this.failed(e)
    } finally {
      waiting.reject = undefined
    }
  }

  /** Commands waiting for an answer (the answered ones are let go when the watchdog next runs). */
  private waiting: Waiting[] = []
  private watchdog: ReturnType<typeof setTimeout> | undefined
  /** When the watchdog was set to run: running much later means this instance's loop was stalled. */
  private watchdogDue = 0

  private watch(reject: (e: unknown) => void): Waiting {
    const w = new Waiting(performance.now() + this.settings.timeoutMs, reject)
    this.waiting.push(w)
    if (this.watchdog === undefined) this.arm(this.settings.timeoutMs)
    return w
  }

  private arm(ms: number) {
    this.watchdogDue = performance.now() + ms
    this.watchdog = setTimeout(this.expire, ms)
  }

  /** Fails the commands past their deadline, and sets the watchdog for the next one still waiting. */
  private readonly expire = () => {
    this.watchdog = undefined
    const now = performance.now()
    const ms = this.settings.timeoutMs
    // run late: this instance's own loop was stalled (a big upload, GC), not Redis, and the
    // answers may be waiting in the socket: what is past its deadline gets one more period
    const stalled = now - this.watchdogDue > STALL_MS
    const kept: Waiting[] = []
    const expired: Waiting[] = []
    let next = Infinity
    for (const w of this.waiting) {
      if (w.reject === undefined) continue
      if (w.due <= now) {
        if (!stalled || w.extended) {
          expired.push(w)
          continue
        }
        w.extended = true
        w.due = now + ms
      }
      kept.push(w)
      if (w.due < next) next = w.due
    }
    this.waiting = kept
    if (kept.length > 0) this.arm(Math.max(1, next - now))
    if (expired.length === 0) return
    // one more turn of the loop: an answer already read goes first
    setImmediate(() => {
      for (const w of expired) w.reject?.(new RedisUnavailable(`no answer within ${ms} ms`))
    })
  }

  /** What gathers this turn's parts (the credits' admissions, by key): see `soon`. */
  private soonFns: (() => void)[] = []
  /** This turn's parts, by script: one call each (see `part`). A list, not a Map: no iterator a turn. */
  private turns: { s: Script; parts: Part[] }[] = []
  private scheduled = false

  /**
   * Runs `fn`, which gathers parts over this turn of the loop, on the next turn, before the
   * turn's parts are sent.
   */
  soon(fn: () => void) {
    this.soonFns.push(fn)
    this.schedule()
  }

  /**
   * A part of the next turn's call to `s`: the parts of one turn (a request's limits and its
   * admission, and every other request's of that turn) go in one call (a few past
   * MAX_TURN_WEIGHT), one command, one write and one answer, instead of one each. `s` takes
   * them as cluster/scripts.ts's TURN does. A part answered with a string failed with that
   * error, alone; a call that fails fails all its parts.
   */
  part(s: Script, p: Part) {
    let turn: { s: Script; parts: Part[] } | undefined
    for (let i = 0; i < this.turns.length; i++) if (this.turns[i]!.s === s) turn = this.turns[i]
    if (!turn) this.turns.push((turn = { s, parts: [] }))
    turn.parts.push(p)
    this.schedule()
  }

  /** Whether a call goes on the next turn anyway (parts or gatherers wait for it): what joins it costs no call. */
  get going(): boolean {
    return this.scheduled
  }

  private schedule() {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(this.runSoon)
  }

  private readonly runSoon = () => {
    const fns = this.soonFns
    this.soonFns = []
    // still scheduled while they run: the parts they add go in this callback's calls below
    for (const fn of fns) {
      try {
        fn()
      } catch (e) {
        this.log.error('redis: gathering a batch failed', { error: String(e) })
      }
    }
    this.scheduled = false
    if (this.soonFns.length > 0) this.schedule()
    for (const turn of this.turns) {
      const list = turn.parts
      if (list.length === 0) continue
      turn.parts = []
      const s = turn.s
      let from = 0
      let weight = 0
      for (let i = 0; i < list.length; i++) {
        if (weight > 0 && weight + list[i]!.weight > MAX_TURN_WEIGHT) {
          this.call(s, list.slice(from, i))
          from = i
          weight = 0
        }
        weight += list[i]!.weight
      }
      this.call(s, from === 0 ? list : list.slice(from))
    }
  }

  private call(s: Script, parts: Part[]) {
    const keys: string[] = []
    const args: string[] = []
    // the call's last take sent whole: a take of the same limits after it goes as a repeat
    let take: Part | undefined
    for (const p of parts) {
      if (p.kind === 't') {
        if (take !== undefined && sameLimits(take, p)) {
          args.push('T', '0', '1', p.args[0]!)
          continue
        }
        take = p
      }
      args.push(p.kind, String(p.keys.length), String(p.args.length))
      for (const k of p.keys) keys.push(k)
      for (const a of p.args) args.push(a)
    }
    this.eval(s, keys, args).then(
      (raw) => {
        const answers = raw as unknown[]
        for (let i = 0; i < parts.length; i++) {
          const a = answers[i]
          if (typeof a === 'string' || a === undefined) parts[i]!.reject(new Error(String(a ?? 'no answer for this part')))
          else parts[i]!.resolve(a)
        }
      },
      (e) => {
        for (const p of parts) p.reject(e)
      },
    )
  }

  /** EVALSHA, loading the script on NOSCRIPT. */
  async eval(s: Script, keys: string[], args: string[]): Promise<unknown> {
    const argv = [s.sha, String(keys.length)]
    for (const k of keys) argv.push(k)
    for (const a of args) argv.push(a)
    try {
      return await this.send('EVALSHA', argv)
    } catch (e) {
      if (!isServerError(e) || !String((e as Error).message).startsWith('NOSCRIPT')) throw e
      await this.send('SCRIPT', ['LOAD', s.source])
      return this.send('EVALSHA', argv)
    }
  }

  close() {
    this.closed = true
    clearInterval(this.health)
    this.client?.close()
    this.client = null
  }
}

/** One part of a turn's call: its kind, KEYS and ARGV, and where its answer goes. */
export interface Part {
  kind: string
  keys: string[]
  args: string[]
  /** What it weighs against a call's bound: a take 1, a key's admissions one each. */
  weight: number
  resolve(answer: unknown): void
  reject(e: unknown): void
}

/**
 * Whether two takes count in the same windows with the same limits, their members aside (a take's
 * first ARGV): the second then goes as a repeat of the first, its member only. One key's requests
 * of a turn are such takes, and each whole take is a dozen arguments that Bun's client encodes
 * and Redis reads one by one.
 */
function sameLimits(a: Part, b: Part): boolean {
  if (a.keys.length !== b.keys.length || a.args.length !== b.args.length) return false
  for (let i = 0; i < a.keys.length; i++) if (a.keys[i] !== b.keys[i]) return false
  for (let i = 1; i < a.args.length; i++) if (a.args[i] !== b.args[i]) return false
  return true
}

/** A call's parts weigh this much at most: a longer script would hold up every other client of Redis. */
const MAX_TURN_WEIGHT = 256

/** A command waiting for its answer; `reject` is let go once it is answered. */
class Waiting {
  /** Given one more period already (the loop was stalled when it came due). */
  extended = false
  constructor(
    public due: number,
    public reject: ((e: unknown) => void) | undefined,
  ) {}
}

/**
 * Any failure of a shared-store step as RedisUnavailable, so that a request gets the 503 (or
 * the per-instance fallback) and never a 500: an error Redis itself answered (out of memory,
 * a read-only replica) is logged as such first.
 */
export function asUnavailable(e: unknown, log: Logger): RedisUnavailable {
  if (e instanceof RedisUnavailable) return e
  const reason = String((e as Error)?.message ?? e)
  log.error('redis: a command failed', { error: reason })
  return new RedisUnavailable(reason)
}

/** An error the server answered (the connection is fine), as opposed to no answer at all. */
function isServerError(e: unknown): boolean {
  return (e as { code?: string })?.code === 'ERR_REDIS_SERVER_ERROR' || /^(NOSCRIPT|ERR|WRONGTYPE)/.test(String((e as Error)?.message))
}
