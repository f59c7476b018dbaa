// Reservations and the running spend in Redis, for several instances. Per key:
//   <prefix>cr:{id}   hash  spent: the key's settled spend, seeded from the database the
//                              first time any instance admits the key, then moved only here
//   <prefix>rsv:{id}  hash  reservation id → estimated USD of a request in progress (and
//                           their running sum: cluster/scripts.ts)
//   <prefix>rsvx:{id} zset  reservation id → when it lapses (a request that died unsettled)
// Each step is one Lua script (cluster/scripts.ts), so admission (credits − spent − reserved
// > 0) and the hold are atomic across instances: a key funded for N requests serves at most
// N + 1 however the requests are spread, as on one instance. The database still gets every cost through the
// recorder, as without Redis; this is what admission reads. Every instance charges its costs
// here as its requests end (`settle`), so none waits for another's database write. A key's
// admissions of one turn of the loop go in one part of the turn's call, with the turn's
// rate-limit takes (SharedRedis.part): one command a turn. Its settlements wait up to 25 ms, and go
// with its next admission when one comes in that time (at a steady rate, nearly always), else
// in a call of their own: a funded request costs one call at most, its limits included. A key with
// no credit limit has its costs sent once a second: they guard no admission.
//
// With `redis.take_ahead` (the default), a busy key far from its balance has its next requests'
// holds made while the current one is served (cluster/ahead.ts), about 25 ms of them at its
// rate, topped up whenever a call goes anyway: at a steady 1,000 requests a second, one call
// serves about a dozen requests, their limits, holds and settlements together.
import type { Logger } from '../http/log.ts'
import { Ahead, HOLD_HEADROOM, HOLD_MARGIN, PACE_MS, turns } from '../cluster/ahead.ts'
import { asUnavailable, RedisUnavailable, type SharedRedis } from '../cluster/redis.ts'
import { FIGURES, RAISE_SEED, RENEW, SETTLE, TURN } from '../cluster/scripts.ts'
import { RESERVATION_TTL_MS, type Hold, type KeyFigures, type Ledger } from './ledger.ts'
import { RedisOwner, type OwnHold } from './redis-owner.ts'

/** An admission waiting for its key's call of this turn. */
interface Asked {
  args: [credits: string, seed: string, usd: string, id: string]
  resolve(r: [number, string, string]): void
  reject(e: unknown): void
}

/** Admissions of one key in one part at most (Lua's stack and Redis's time). */
const RESERVE_CHUNK = 256

/** A key's settled total is kept this long after it was last used (`RedisLedger.settledByKey`), looked over every so many settlements. */
const SETTLED_IDLE_MS = 10 * 60_000
const SETTLED_SWEEP_EVERY = 4096

/** Holds to end kept while Redis is away, at most (about 60 bytes each). */
const MAX_UNRELEASED = 100_000

/** Reservations ended by one script call at most (Lua's unpack has a stack limit). */
const SETTLE_CHUNK = 500

/**
 * How long a settlement waits for an admission of its key to go with. Meanwhile the
 * reservation, not the smaller cost, counts against the key: admission is stricter for these
 * ms, never looser. As long as a busy key's holds made ahead last (PACE_MS), so that its
 * settlements ride with their next call rather than each few ms in a call of their own.
 */
const SETTLE_WAIT_MS = PACE_MS

/**
 * How long the cost of a key with no credit limit waits, with its key's later ones. It guards
 * no admission: Redis keeps it only for a key funded before (seeded), so that its spent is
 * right if it is funded again; its first admission then takes it along. Sent every few ms, it
 * would be a Redis call (and a wake-up of the loop for its answer) every few requests for nothing.
 */
const UNLIMITED_SETTLE_WAIT_MS = 1_000

/** A key's waiting settlements: the reservations they end and their costs' sum. */
interface Pending {
  rids: string[]
  amount: number
  /** Settlements merged in (for `open`). */
  n: number
  /** Whether any of them ends a hold or moves a funded key's spent (sent within SETTLE_WAIT_MS). */
  urgent: boolean
}

/**
 * A settlement's ARGV (scripts.ts's settle); none: 0, '', 0. `charged`: on Redis's clock, when its
 * cost was charged at the latest ('' now); a cost charged before its key's spent was seeded again
 * is dropped there (the seed has it), and the instance raises the spent to the database's figure.
 */
function settlementArgs(p: Pick<Pending, 'rids' | 'amount'> | undefined, charged = ''): string[] {
  return p ? [String(p.amount), charged, String(p.rids.length), ...p.rids] : ['0', '', '0']
}

/** A script's answer to a key's first admission of a call: the figures, whether it seeded, the seed's name, and Redis's time. */
type Answer = [admitted: number, spent: string, reserved: string, seeded?: number, seed?: string, now?: number]

function keysOf(prefix: string, keyId: string): string[] {
  // the hash tag keeps a key's three entries on one node of a Redis Cluster
  return [`${prefix}cr:{${keyId}}`, `${prefix}rsv:{${keyId}}`, `${prefix}rsvx:{${keyId}}`]
}

/** A hold made ahead: its id, its key and how much it holds. */
interface HeldAhead {
  id: string
  keyId: string
  usd: number
}

/** Whether an admitted hold of `usd` leaves room to make the next one ahead (`r`: the script's answer). */
function roomy(credits: number, r: [number, string, string], usd: number): boolean {
  return credits - Number(r[1]) - Number(r[2]) - usd >= HOLD_HEADROOM * usd
}

/** A hold's id: its key, then 32 hex digits, the first 12 of them its gateway's id when it has one (redis-owner.ts). */
function reservationIdOf(keyId: string, owner: string | undefined): string {
  const hex = crypto.randomUUID().replaceAll('-', '')
  return `rsr:${keyId}:${owner ? owner + hex.slice(0, 20) : hex}`
}

/** Reservation ids carry their key, so that settling needs nothing else. */
function keyOfReservation(id: string): string | undefined {
  const m = /^rsr:(.+):[0-9a-f]{32}$/.exec(id)
  return m?.[1]
}

export class RedisLedger implements Ledger {
  readonly kind = 'redis'
  /** Settlements under way, counted so that `open` (tests, shutdown) sees them to the end. */
  private settling = 0
  /**
   * Spend that could not be settled while Redis was away, by key and then by Redis's time when
   * this instance last heard from it (the costs were charged after): added when it returns to a
   * spent seeded before that time. One seeded after (Redis lost the key meanwhile) was read from
   * the database and an instance's own figure, which hold these costs: added to it, they counted
   * twice. Then the spent is raised to the database's figure instead, never lowered.
   */
  private owed = new Map<string, Map<string, number>>()
  /** Redis's time in its last answer to an admission (ms; 0: none yet). */
  private lastHeard = 0
  /**
   * The costs this instance has settled, by key (signed: a cost taken back counts less), since
   * the key was last idle SETTLED_IDLE_MS: what it settled after a seed went to Redis after it,
   * and is left out of what the seed is raised by (`reseeded`). A key's entry goes once no
   * settlement or admission has touched it that long (a raise reads the database within seconds).
   */
  private settledByKey = new Map<string, { usd: number; at: number }>()
  private settledSweep = 0
  /**
   * Holds to end that could not be sent while Redis was away, by key: ended when it returns.
   * Left alone, each would count against its key until it lapses (a minute), next to the cost
   * that replaced it, or for nothing at all (an admission that timed out here, run by Redis once
   * it resumed). Bounded: past MAX_UNRELEASED they are left to lapse.
   */
  private unreleased = new Map<string, string[]>()
  private unreleasedCount = 0

  /** Holds made ahead, by key (see cluster/ahead.ts); none without `take_ahead`. */
  readonly ahead?: Ahead<HeldAhead>

  /** This gateway among those sharing Redis, once `own` (its holds carry its id; a dead one's are swept). */
  private owner?: RedisOwner
  /**
   * This gateway's holds, from their admission's asking to their settlement's: written again
   * should a sweep take them while it lives (`made`: Redis admitted them).
   */
  private readonly mine = new Map<string, { keyId: string; usd: number; made: boolean }>()

  constructor(private readonly redis: SharedRedis, private readonly log: Logger, private readonly ttlMs = RESERVATION_TTL_MS) {
    redis.onRecover(() => this.payOwed())
    if (redis.settings.takeAhead) this.ahead = new Ahead((h) => this.move(h.id, h.keyId, 0))
  }

  /**
   * Take this gateway's id among those sharing Redis, and beat (redis-owner.ts): from now on its
   * holds carry the id, and a request refused while holds count has a dead gateway's deleted.
   * Call before admitting anything. Never throws (Redis away: the beats go on trying).
   */
  async own(): Promise<void> {
    if (this.owner) return
    this.owner = new RedisOwner(this.redis, this.log, () => this.liveHolds(), this.ttlMs)
    await this.owner.start()
  }

  private liveHolds(): OwnHold[] {
    const out: OwnHold[] = []
    for (const [id, h] of this.mine) if (h.made) out.push({ id, keyId: h.keyId, usd: h.usd })
    return out
  }

  /**
   * `key.spent` seeds a key no instance has admitted yet. Throws RedisUnavailable: the caller
   * refuses, or admits on this instance's figures, per `redis.on_error`.
   */
  async reserve(key: KeyFigures, usd: number | null): Promise<Hold> {
    const amount = usd !== null && Number.isFinite(usd) && usd > 0 ? usd : 0
    const ahead = this.ahead
    let busy = false
    // counted once a request, by its limits: here only read
    if (ahead && amount > 0 && !turns.crowded) {
      const now = performance.now()
      busy = ahead.busy(key.id, now)
      // a hold made ahead serves a request whose worst case it covers (held a little more, briefly)
      const fits = (h: HeldAhead) => h.usd >= amount
      let got = ahead.take(key.id, now, fits)
      if (!got) {
        const coming = ahead.next(key.id, fits)
        if (coming) got = await coming
      }
      if (got) {
        this.holdAhead(key, got.usd)
        return { admitted: true, reservationId: got.id }
      }
    }
    let id = reservationIdOf(key.id, this.owner?.id)
    let r = await this.admitOnce(key, amount, id)
    // refused while holds count: they may be a dead gateway's; if any were deleted, asked again
    if (r[0] !== 1 && Number(r[2]) > 0 && this.owner && (await this.owner.refused(key.id))) r = await this.admitOnce(key, amount, (id = reservationIdOf(key.id, this.owner.id)))
    if (r[0] !== 1) return { admitted: false, spent: Number(r[1]), reserved: Number(r[2]) }
    if (busy && roomy(key.credits, r, amount)) this.holdAhead(key, amount * HOLD_MARGIN)
    return { admitted: true, reservationId: amount > 0 ? id : undefined }
  }

  private async admitOnce(key: KeyFigures, amount: number, id: string): Promise<[number, string, string]> {
    try {
      return await this.ask(key, amount, id)
    } catch (e) {
      // no answer is not no hold: a stalled Redis runs the call once it resumes. The hold's
      // id is ours, so it is ended (nothing, if it was never made).
      if (amount > 0) this.move(id, key.id, 0)
      throw asUnavailable(e, this.log)
    }
  }

  /** One admission, in this turn's call: { admitted (1/0), spent, reserved before it }. */
  private ask(key: KeyFigures, amount: number, id: string): Promise<[number, string, string]> {
    // its resolvers, with no executor closure an admission
    const answer = Promise.withResolvers<[number, string, string]>()
    let list = this.asked.get(key.id)
    if (!list) this.asked.set(key.id, (list = []))
    list.push({ args: [String(key.credits), String(key.spent), String(amount), id], resolve: answer.resolve, reject: answer.reject })
    if (amount > 0) this.mine.set(id, { keyId: key.id, usd: amount, made: false })
    if (this.asked.size === 1 && list.length === 1) this.redis.soon(this.sendAsked)
    return answer.promise
  }

  /** The next requests' holds of `usd`, made now: kept only while the key's balance has room. */
  private holdAhead(key: KeyFigures, usd: number) {
    for (let n = this.ahead!.wanted(key.id, this.redis.going); n > 0; n--) this.holdOneAhead(key, usd)
  }

  private holdOneAhead(key: KeyFigures, usd: number) {
    const ahead = this.ahead!
    const id = reservationIdOf(key.id, this.owner?.id)
    this.ask(key, usd, id).then(
      (r) => {
        const kept = r[0] === 1 && roomy(key.credits, r, usd)
        if (r[0] === 1 && !kept) this.move(id, key.id, 0)
        ahead.settle(key.id, kept ? { id, keyId: key.id, usd } : undefined, performance.now())
      },
      () => {
        this.move(id, key.id, 0)
        ahead.settle(key.id, undefined, performance.now())
      },
    )
  }

  /** Admissions asked this turn, by key. */
  private asked = new Map<string, Asked[]>()

  /** Each key's admissions of this turn in one call (a key's entries share one hash slot), its waiting settlements with the first. */
  private readonly sendAsked = () => {
    const asked = this.asked
    this.asked = new Map()
    for (const [keyId, list] of asked) {
      const settledBefore = this.settledOf(keyId)
      let along = this.pending.get(keyId)
      if (along) {
        this.pending.delete(keyId)
        if (along.rids.length > SETTLE_CHUNK) along = this.takeChunk(keyId, along)
      }
      for (let i = 0; i < list.length; i += RESERVE_CHUNK) {
        const part = list.length > RESERVE_CHUNK ? list.slice(i, i + RESERVE_CHUNK) : list
        const p = i === 0 ? along : undefined
        const args = [String(this.ttlMs), ...settlementArgs(p)]
        for (const a of part) args.push(...a.args)
        this.redis.part(TURN, {
          kind: 'r',
          keys: keysOf(this.redis.settings.prefix, keyId),
          args,
          weight: part.length,
          resolve: (out) => {
            if (p) this.settling -= p.n
            const answers = out as Answer[]
            const first = answers[0]
            if (first?.[5] !== undefined && first[5] > this.lastHeard) this.lastHeard = first[5]
            if (first?.[3] === 1) void this.reseeded(keyId, Number(part[0]!.args[1]), first[4] ?? '', settledBefore)
            for (let j = 0; j < part.length; j++) {
              const a = answers[j]! as [number, string, string]
              const mine = this.mine.get(part[j]!.args[3])
              if (mine) {
                if (a[0] === 1) mine.made = true
                else this.mine.delete(part[j]!.args[3])
              }
              part[j]!.resolve(a)
            }
          },
          reject: (e) => {
            if (p) this.unsent(keyId, p, false, e)
            for (const a of part) a.reject(e)
          },
        })
      }
    }
  }

  /**
   * The part of a key's waiting settlements one call can take along: every cost, and a chunk of
   * the holds they end. The costs must go with the admission: should it seed the key's spent
   * again, the seed (this instance's figure) counts them, and sent after it they would count
   * twice. The other holds wait a moment more, for the next call; meanwhile they count against
   * the key beside their costs (stricter, never looser).
   */
  private takeChunk(keyId: string, p: Pending): Pending {
    this.pending.set(keyId, { rids: p.rids.slice(SETTLE_CHUNK), amount: 0, n: 1, urgent: true })
    this.settling++
    this.flushTimer ??= setTimeout(this.flush, SETTLE_WAIT_MS)
    return { ...p, rids: p.rids.slice(0, SETTLE_CHUNK) }
  }

  /** A key's spent as the database stores it (Billing's). */
  private storedSpent?: (keyId: string) => Promise<number | null>

  readStored(of: (keyId: string) => Promise<number | null>): void {
    this.storedSpent = of
  }

  /**
   * Redis had no spent for the key (a restart without persistence, a flush, an eviction) and took
   * `seed`, this instance's cached figure: it counts what this instance charged, but only what
   * others had stored when it last read the key. Where the database's figure is larger, Redis's
   * is raised by the difference within a few ms, and never lowered this way. What stays uncounted
   * is what other instances charged and had not stored yet (a few ms of their costs). The costs
   * this instance settled after the seed's call was sent (`settledBefore`: its total then) are
   * not part of the difference: they reach Redis on their own, after the seed, and those the
   * database has stored by the time it is read counted twice (a busy database read late).
   */
  private async reseeded(keyId: string, seed: number, name: string, settledBefore: number): Promise<void> {
    try {
      const stored = await this.storedSpent?.(keyId)
      if (stored == null) return
      const raise = stored - seed - (this.settledOf(keyId) - settledBefore)
      // money is kept to 1e-10 USD: a difference below is the doubles' noise
      if (!(raise >= 1e-10)) return
      await this.redis.eval(RAISE_SEED, keysOf(this.redis.settings.prefix, keyId).slice(0, 1), [String(raise), name])
      this.log.info('redis: a key\'s spent was seeded again; raised to the database\'s figure', { key_id: keyId, seed, stored })
    } catch (e) {
      this.log.warn('redis: a key\'s spent seeded again could not be checked against the database', { key_id: keyId, error: String(e) })
    }
  }

  /** The actual cost replaces the reservation, in one step (a moment after the call). */
  settle(reservationId: string | undefined, keyId: string | undefined, usd: number, unlimited = false): void {
    const amount = Number.isFinite(usd) && usd > 0 ? usd : 0
    const key = keyId ?? (reservationId && keyOfReservation(reservationId))
    if (key) void this.move(reservationId, key, amount, unlimited)
  }

  /**
   * Each key's waiting settlements in a call of their own, now (see Ledger); not those of a key
   * with no credit limit, which guard no admission and wait their second (a call each key each
   * write of records would be many calls for nothing where many such keys are busy).
   */
  sendNow(keyIds: Iterable<string>): Promise<void> {
    const sent: Promise<void>[] = []
    for (const keyId of keyIds) {
      const p = this.pending.get(keyId)
      if (!p?.urgent) continue
      this.pending.delete(keyId)
      sent.push(this.send(keyId, p))
    }
    return Promise.all(sent).then(() => {})
  }

  unsettle(keyId: string, usd: number): void {
    if (Number.isFinite(usd) && usd > 0) void this.move(undefined, keyId, -usd)
  }

  renew(ids: string[]): void {
    const byKey = new Map<string, string[]>()
    for (const id of ids) {
      const keyId = keyOfReservation(id)
      if (keyId === undefined) continue
      const list = byKey.get(keyId)
      if (list) list.push(id)
      else byKey.set(keyId, [id])
    }
    // a renewal that fails (Redis away) is tried again at the next; one that lapses meanwhile stops counting
    for (const [keyId, list] of byKey) this.redis.eval(RENEW, keysOf(this.redis.settings.prefix, keyId).slice(1), [String(this.ttlMs), ...list]).catch(() => {})
  }

  /** Reservations are counted in Redis, not here: see `figures`. */
  reserved(): number {
    return 0
  }

  /** Settlements this instance has not finished sending. */
  get open(): number {
    return this.settling
  }

  async figures(keyId: string): Promise<{ spent: number | null; reserved: number }> {
    const [spent, reserved] = (await this.redis.eval(FIGURES, keysOf(this.redis.settings.prefix, keyId), [])) as [string | null, string]
    return { spent: spent === null ? null : Number(spent), reserved: Number(reserved) }
  }

  /** Settlements waiting for an admission of their key to go with, by key. */
  private pending = new Map<string, Pending>()
  private flushTimer: ReturnType<typeof setTimeout> | undefined
  private unlimitedTimer: ReturnType<typeof setTimeout> | undefined

  /**
   * Ends a reservation and moves the key's spent by `amount` (signed), in one step with the
   * key's other settlements of the next few ms (a second for the cost alone of an `unlimited`
   * key), and with its next admission if one comes then. A reservation ends only with its cost
   * counted, so the cost is never hidden from admission meanwhile. Never throws.
   */
  private move(reservationId: string | undefined, keyId: string, amount: number, unlimited = false): void {
    const rid = reservationId && keyOfReservation(reservationId) === keyId ? reservationId : ''
    if (!rid && amount === 0) return
    if (amount !== 0) this.settled(keyId, amount)
    // ended: never written again, even before its settlement reaches Redis
    if (rid) this.mine.delete(rid)
    let p = this.pending.get(keyId)
    if (!p) this.pending.set(keyId, (p = { rids: [], amount: 0, n: 0, urgent: false }))
    if (rid) p.rids.push(rid)
    p.amount += amount
    p.n++
    this.settling++
    if (rid || !unlimited) {
      p.urgent = true
      this.flushTimer ??= setTimeout(this.flush, SETTLE_WAIT_MS)
    } else if (this.unlimitedTimer === undefined) {
      // a stop sends them: this wait holds no process open
      this.unlimitedTimer = setTimeout(this.flushAll, UNLIMITED_SETTLE_WAIT_MS)
      this.unlimitedTimer.unref?.()
    }
  }

  /** The urgent settlements no admission took along: a call each key. */
  private readonly flush = () => {
    this.flushTimer = undefined
    for (const [keyId, p] of this.pending) {
      if (!p.urgent) continue
      this.pending.delete(keyId)
      void this.send(keyId, p)
    }
  }

  /** Every waiting settlement: a call each key. */
  private readonly flushAll = () => {
    clearTimeout(this.unlimitedTimer)
    this.unlimitedTimer = undefined
    const batch = this.pending
    this.pending = new Map()
    for (const [keyId, p] of batch) void this.send(keyId, p)
  }

  private async send(keyId: string, p: Pending): Promise<void> {
    let costSent = false
    try {
      for (let i = 0; i === 0 || i < p.rids.length; i += SETTLE_CHUNK) {
        // the costs go with the first call: a later one failing leaves only reservations, which lapse
        const part = { rids: p.rids.slice(i, i + SETTLE_CHUNK), amount: costSent ? 0 : p.amount }
        await this.redis.eval(SETTLE, keysOf(this.redis.settings.prefix, keyId), settlementArgs(part))
        costSent = true
      }
      this.settling -= p.n
    } catch (e) {
      this.unsent(keyId, p, costSent, e)
    }
  }

  /** A settlement's call failed: the reservations lapse by themselves; the cost (or its taking back) must not be lost. */
  private unsent(keyId: string, p: Pending, costSent: boolean, e: unknown) {
    if (!costSent && p.amount !== 0) {
      const heard = Math.max(this.lastHeard, this.redis.heardAt)
      this.owe(keyId, heard > 0 ? String(heard) : '', p.amount)
    }
    // kept only for Redis away (its return sends them); ending a hold twice does nothing: all
    // of them go again, sent or not. An error Redis answered would only answer it again.
    if (e instanceof RedisUnavailable && p.rids.length > 0 && this.unreleasedCount + p.rids.length <= MAX_UNRELEASED) {
      let list = this.unreleased.get(keyId)
      if (!list) this.unreleased.set(keyId, (list = []))
      for (const rid of p.rids) list.push(rid)
      this.unreleasedCount += p.rids.length
    }
    if (!(e instanceof RedisUnavailable)) this.log.error('redis credits: settle failed', { key_id: keyId, error: String(e) })
    this.settling -= p.n
  }

  /** Shutdown: holds made ahead are ended, and the waiting settlements go now, and are waited for (bounded by the store's timeout). */
  async stop(): Promise<void> {
    this.owner?.stop()
    this.ahead?.close()
    clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    this.flushAll()
    const until = Date.now() + this.redis.settings.timeoutMs + 100
    while (this.settling > 0 && Date.now() < until) await Bun.sleep(2)
  }

  /** What this instance settled of the key's costs so far (its entry kept from going idle). */
  private settledOf(keyId: string): number {
    const e = this.settledByKey.get(keyId)
    if (!e) return 0
    e.at = performance.now()
    return e.usd
  }

  private settled(keyId: string, usd: number) {
    const now = performance.now()
    const e = this.settledByKey.get(keyId)
    if (e) {
      e.usd += usd
      e.at = now
    } else this.settledByKey.set(keyId, { usd, at: now })
    // the keys idle long enough let go, a look every so many settlements
    if (++this.settledSweep % SETTLED_SWEEP_EVERY === 0) for (const [k, x] of this.settledByKey) if (now - x.at > SETTLED_IDLE_MS) this.settledByKey.delete(k)
  }

  private owe(keyId: string, charged: string, usd: number) {
    let byTime = this.owed.get(keyId)
    if (!byTime) this.owed.set(keyId, (byTime = new Map()))
    byTime.set(charged, (byTime.get(charged) ?? 0) + usd)
  }

  /**
   * What a key owes since `charged`, sent on its own: added to a spent seeded before; left out of
   * one seeded after, which is then raised to the database's figure where that is larger.
   */
  private async payOwedUnder(keyId: string, charged: string, usd: number): Promise<void> {
    this.settling++
    const settledBefore = this.settledOf(keyId)
    try {
      const [dropped, seed, spent] = (await this.redis.eval(SETTLE, keysOf(this.redis.settings.prefix, keyId), settlementArgs({ rids: [], amount: usd }, charged))) as [number, string, string]
      if (dropped === 1) await this.reseeded(keyId, Number(spent), seed, settledBefore)
    } catch (e) {
      this.owe(keyId, charged, usd)
      if (!(e instanceof RedisUnavailable)) this.log.error('redis credits: settle failed', { key_id: keyId, error: String(e) })
    } finally {
      this.settling--
    }
  }

  private payOwed() {
    const owed = this.owed
    this.owed = new Map()
    for (const [keyId, byTime] of owed) for (const [charged, usd] of byTime) void this.payOwedUnder(keyId, charged, usd)
    const unreleased = this.unreleased
    this.unreleased = new Map()
    this.unreleasedCount = 0
    for (const [keyId, rids] of unreleased) for (const rid of rids) this.move(rid, keyId, 0)
  }
}
