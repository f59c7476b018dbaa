// Whose credit holds are whose, among gateways sharing Redis. Each running gateway takes an id of
// its own (12 hex digits, in every hold id it makes: redis-ledger.ts) and beats every second: its
// entry in a shared zset gets Redis's time (cluster/owner-scripts.ts). A gateway killed outright
// beats no more; its holds are deleted by another one that a key's holds refuse a request on,
// once the dead one's last beat is STALE_MS old and has been seen so again CONFIRM_MS later
// (every time on Redis's clock, never a gateway's). Before, they counted until they lapsed, a
// minute: the key was refused a 402 on every instance for that long.
// Never a live gateway's holds: a gateway stalled (a slow loop, SIGSTOP) less than about
// STALE_MS + CONFIRM_MS − BEAT_MS keeps them; a Redis stall delays every beat alike, and the
// second look comes CONFIRM_MS of Redis running after the first, long after the beats queued
// meanwhile. A gateway stalled longer, or cut off from Redis that long, may lose them: its next
// beat says so and it writes them again at once (meanwhile another instance may admit on the
// credit they held, as when they lapsed before).
// The holds are stored per API key (a hash and a zset), with no index by owner: a sweep looks at
// one key's holds, the key a request was refused on; a key nobody is refused on is not harmed
// by a dead gateway's holds, which lapse as before.
import type { Logger } from '../http/log.ts'
import type { SharedRedis } from '../cluster/redis.ts'
import { BEAT, REWRITE, SWEEP } from '../cluster/owner-scripts.ts'

/** How often a gateway beats. */
const BEAT_MS = 1_000
/** A beat this old makes its owner suspected dead... */
const STALE_MS = 4_000
/** ...and its holds go once it is still the last one this much later. */
const CONFIRM_MS = 3_000
/** A key whose holds include an owner silent this long is looked at every second until it beats or its holds go. */
const SILENT_MS = 2 * BEAT_MS + 500
/** An owner's entry outlives its last beat this long (its holds lapsed well before). */
const FORGET_MS = 10 * 60_000
/** A refusal looks at its key's owners at most this often. */
const LOOK_EVERY_MS = 1_000
/** Keys looked at every second at most, and suspects kept at most. */
const MAX_WATCHED = 64
const MAX_SUSPECTS = 256
/** Holds written again by one call at most. */
const REWRITE_CHUNK = 500

/** A hold of this gateway as it wrote it, to write again. */
export interface OwnHold {
  id: string
  keyId: string
  usd: number
}

export class RedisOwner {
  /** This gateway's id, in its holds' ids. */
  readonly id = crypto.randomUUID().replaceAll('-', '').slice(0, 12)
  private readonly beatTimer: ReturnType<typeof setInterval>
  private readonly watchTimer: ReturnType<typeof setInterval>
  private beaten = false
  private beating = false
  private rewriteDue = false
  /** Owners whose last beat was stale at a look: that beat, and when first seen so (Redis ms). */
  private readonly suspects = new Map<string, { beat: number; at: number }>()
  /** Keys whose holds include a silent owner, looked at every second. */
  private readonly watched = new Set<string>()
  /** A refusal's last look, by key (performance.now()). */
  private readonly looked = new Map<string, number>()
  private readonly looking = new Map<string, Promise<number>>()

  constructor(
    private readonly redis: SharedRedis,
    private readonly log: Logger,
    /** This gateway's live holds (made and not ended), to write again. */
    private readonly holds: () => OwnHold[],
    private readonly ttlMs: number,
  ) {
    this.beatTimer = setInterval(() => void this.beat(), BEAT_MS)
    this.beatTimer.unref?.()
    this.watchTimer = setInterval(() => void this.watch(), BEAT_MS)
    this.watchTimer.unref?.()
  }

  private get ownersKey() {
    return `${this.redis.settings.prefix}owners`
  }

  private get sweptKey() {
    return `${this.redis.settings.prefix}owners:swept`
  }

  /** The first beat: this gateway is known before its holds can be swept. Never throws. */
  async start(): Promise<void> {
    await this.beat()
  }

  /** Every second: this gateway's beat; its holds written again when a sweep took them (or Redis lost its entry). */
  async beat(): Promise<void> {
    if (this.beating) return
    this.beating = true
    try {
      const [, prev, swept] = (await this.redis.eval(BEAT, [this.ownersKey, this.sweptKey], [this.id, String(FORGET_MS)])) as [number, string, number]
      if (swept === 1 || (this.beaten && prev === '')) this.rewriteDue = true
      this.beaten = true
      if (this.rewriteDue) {
        const n = await this.rewrite()
        this.rewriteDue = false
        this.log.warn("redis credits: this gateway's holds were deleted as a stopped gateway's (it had not been heard from for seconds); written again", { holds: n })
      }
    } catch {
      // Redis away: the next beat
    } finally {
      this.beating = false
    }
  }

  private async rewrite(): Promise<number> {
    const byKey = new Map<string, OwnHold[]>()
    for (const h of this.holds()) {
      const list = byKey.get(h.keyId)
      if (list) list.push(h)
      else byKey.set(h.keyId, [h])
    }
    let n = 0
    const p = this.redis.settings.prefix
    for (const [keyId, list] of byKey)
      for (let i = 0; i < list.length; i += REWRITE_CHUNK) {
        const args = [String(this.ttlMs)]
        for (const h of list.slice(i, i + REWRITE_CHUNK)) args.push(h.id, String(h.usd))
        n += Number(await this.redis.eval(REWRITE, [`${p}rsv:{${keyId}}`, `${p}rsvx:{${keyId}}`], args))
      }
    return n
  }

  /**
   * A request of the key was refused while holds counted: whether a look at its holds' owners
   * deleted a dead gateway's (then it is asked again). An owner stale and not yet confirmed is
   * waited for (CONFIRM_MS at most) and looked at again. At most one look a second a key. Never throws.
   */
  async refused(keyId: string): Promise<boolean> {
    let p = this.looking.get(keyId)
    if (!p) {
      const now = performance.now()
      if (now - (this.looked.get(keyId) ?? -Infinity) < LOOK_EVERY_MS) return false
      if (this.looked.size > 4 * MAX_WATCHED) for (const [k, at] of this.looked) if (now - at >= LOOK_EVERY_MS) this.looked.delete(k)
      this.looked.set(keyId, now)
      p = this.lookTwice(keyId)
        .catch(() => 0)
        .finally(() => this.looking.delete(keyId))
      this.looking.set(keyId, p)
    }
    return (await p) > 0
  }

  private async lookTwice(keyId: string): Promise<number> {
    const first = await this.look(keyId)
    if (first.deleted > 0 || first.waitMs === undefined) return first.deleted
    await Bun.sleep(first.waitMs + 50)
    return (await this.look(keyId)).deleted
  }

  /** Every second: the keys where an owner was silent, looked at again until it beats or its holds go. */
  private watching = false
  private async watch() {
    if (this.watching || this.watched.size === 0) return
    this.watching = true
    try {
      for (const keyId of [...this.watched]) if (!this.looking.has(keyId)) await this.look(keyId)
    } catch {
      // Redis away: the next second
    } finally {
      this.watching = false
    }
  }

  /**
   * One look at a key's holds' owners: the dead ones' holds deleted. `waitMs`: when an owner of
   * them is stale and not yet confirmed, how long until it may be.
   */
  private async look(keyId: string): Promise<{ deleted: number; waitMs?: number }> {
    const p = this.redis.settings.prefix
    const args = [this.id, String(STALE_MS), String(CONFIRM_MS)]
    for (const [o, s] of this.suspects) args.push(o, String(s.beat), String(s.at))
    const out = (await this.redis.eval(SWEEP, [`${p}rsv:{${keyId}}`, `${p}rsvx:{${keyId}}`, this.ownersKey, this.sweptKey], args)) as (number | string)[]
    const now = Number(out[0])
    const deleted = Number(out[1])
    if (deleted > 0) this.log.info('credit holds of gateways no longer running released', { key_id: keyId, holds: deleted })
    let waitMs: number | undefined
    let silent = false
    for (let i = 2; i + 1 < out.length; i += 2) {
      const o = String(out[i])
      // an owner that never beat (an older gateway's holds) is nobody's to sweep
      if (out[i + 1] === '') continue
      const beat = Number(out[i + 1])
      if (now - beat >= SILENT_MS) silent = true
      if (now - beat < STALE_MS) {
        this.suspects.delete(o)
        continue
      }
      let s = this.suspects.get(o)
      if (!s || s.beat !== beat) {
        if (this.suspects.size >= MAX_SUSPECTS) this.forgetOldSuspects(now)
        this.suspects.set(o, (s = { beat, at: now }))
      }
      const wait = s.at + CONFIRM_MS - now
      waitMs = Math.max(0, Math.min(waitMs ?? wait, wait))
    }
    if (silent && this.watched.size < MAX_WATCHED) this.watched.add(keyId)
    else if (!silent) this.watched.delete(keyId)
    return { deleted, waitMs }
  }

  private forgetOldSuspects(now: number) {
    for (const [o, s] of this.suspects) if (now - s.at > FORGET_MS) this.suspects.delete(o)
    // still full: the oldest go (looked at again, they are suspected anew)
    for (const o of this.suspects.keys()) {
      if (this.suspects.size < MAX_SUSPECTS) break
      this.suspects.delete(o)
    }
  }

  stop(): void {
    clearInterval(this.beatTimer)
    clearInterval(this.watchTimer)
  }
}
