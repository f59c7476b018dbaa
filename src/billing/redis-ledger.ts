// Reservations and the running spend in Redis, for several instances. Per key:
//   <prefix>cr:{id}   hash  spent: the key's settled spend, seeded from the database the
//                              first time any instance admits the key, then moved only here
//   <prefix>rsv:{id}  hash  reservation id → estimated USD of a request in progress
//   <prefix>rsvx:{id} zset  reservation id → when it lapses (a request that died unsettled)
// Each step is one Lua script, so admission (credits − spent − reserved > 0) and the hold are
// atomic across instances: a key funded for N requests serves at most N + 1 however the
// requests are spread, as on one instance. The database still gets every cost through the
// recorder, as without Redis; this is what admission reads. Every instance charges its costs
// here as its requests end (`settle`), so none waits for another's database write. A key's
// admissions of one turn of the loop go in one call. Its settlements wait a few ms, and go
// with its next admission when one comes in that time (at a steady rate, nearly always), else
// in a call of their own: a funded request costs one call, not two.
import type { Logger } from '../http/log.ts'
import { asUnavailable, RedisUnavailable, script, type SharedRedis } from '../cluster/redis.ts'
import { RESERVATION_TTL_MS, type Hold, type KeyFigures, type Ledger } from './ledger.ts'

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// The settlement part of both scripts below. ARGV from `at`: usd (negative: a cost taken
// back), the number of reservations it ends, then their ids (the settlements of one key made
// in one wait go together). An unseeded key is left unseeded: its first admission reads the
// database, which will have this cost (or not have it) by then. Sets `after`: the next ARGV.
const SETTLE_PART = `
local n = tonumber(ARGV[at + 1])
if n > 0 then
  redis.call('HDEL', KEYS[2], unpack(ARGV, at + 2, at + 1 + n))
  redis.call('ZREM', KEYS[3], unpack(ARGV, at + 2, at + 1 + n))
end
if tonumber(ARGV[at]) ~= 0 and redis.call('HEXISTS', KEYS[1], 'spent') == 1 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'spent', ARGV[at])
end
local after = at + 2 + n
`

// KEYS: cr, rsv, rsvx. ARGV: ttl ms, then a settlement (SETTLE_PART; none: 0, 0), then per
// admission: credits, seed spent, usd, reservation id. The key's settlements waiting on this
// instance count first, as they happened first. Its admissions asked in one turn of the loop
// go in one call, decided in the order asked as separate calls would decide them: the spent
// and the sum of live holds are read once and carried from one to the next. Returns per
// admission { admitted (1/0), spent, reserved }.
const RESERVE = script(`${NOW}
local at = 2
${SETTLE_PART}
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for i = 1, #lapsed do redis.call('HDEL', KEYS[2], lapsed[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('HSETNX', KEYS[1], 'spent', ARGV[after + 1])
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent'))
local reserved = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do reserved = reserved + tonumber(v) end
local ttl = tonumber(ARGV[1])
local held = false
local out = {}
for a = after, #ARGV, 4 do
  local usd = tonumber(ARGV[a + 2])
  if not (tonumber(ARGV[a]) - spent - reserved > 0) then
    out[#out + 1] = { 0, tostring(spent), tostring(reserved) }
  else
    out[#out + 1] = { 1, tostring(spent), tostring(reserved) }
    if usd > 0 then
      redis.call('HSET', KEYS[2], ARGV[a + 3], ARGV[a + 2])
      redis.call('ZADD', KEYS[3], now + ttl, ARGV[a + 3])
      reserved = reserved + usd
      held = true
    end
  end
end
if held then
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
end
return out
`)

/** An admission waiting for its key's call of this turn. */
interface Asked {
  args: [credits: string, seed: string, usd: string, id: string]
  resolve(r: [number, string, string]): void
  reject(e: unknown): void
}

/** Admissions of one key in one call at most (Lua's stack and Redis's time). */
const RESERVE_CHUNK = 256

// KEYS: cr, rsv, rsvx. ARGV: a settlement (SETTLE_PART), when no admission of its key came to
// take it along.
const SETTLE = script(`
local at = 1
${SETTLE_PART}
return 1
`)

/** Reservations ended by one script call at most (Lua's unpack has a stack limit). */
const SETTLE_CHUNK = 500

/**
 * How long a settlement waits for an admission of its key to go with. Meanwhile the
 * reservation, not the smaller cost, counts against the key: admission is stricter for these
 * ms, never looser.
 */
const SETTLE_WAIT_MS = 5

/** A key's waiting settlements: the reservations they end and their costs' sum. */
interface Pending {
  rids: string[]
  amount: number
  /** Settlements merged in (for `open`). */
  n: number
}

// KEYS: cr, rsv, rsvx. The spent (false when unseeded) and the sum of live reservations.
const FIGURES = script(`${NOW}
local reserved = 0
local live = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf')
for i = 1, #live do reserved = reserved + (tonumber(redis.call('HGET', KEYS[2], live[i])) or 0) end
return { redis.call('HGET', KEYS[1], 'spent'), tostring(reserved) }
`)

/** A settlement's ARGV (SETTLE_PART); none: 0, 0. */
function settlementArgs(p: Pending | undefined): string[] {
  return p ? [String(p.amount), String(p.rids.length), ...p.rids] : ['0', '0']
}

function keysOf(prefix: string, keyId: string): string[] {
  // the hash tag keeps a key's three entries on one node of a Redis Cluster
  return [`${prefix}cr:{${keyId}}`, `${prefix}rsv:{${keyId}}`, `${prefix}rsvx:{${keyId}}`]
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
  /** Spend that could not be settled while Redis was away: added when it returns. */
  private owed = new Map<string, number>()

  constructor(private readonly redis: SharedRedis, private readonly log: Logger, private readonly ttlMs = RESERVATION_TTL_MS) {
    redis.onRecover(() => this.payOwed())
  }

  /**
   * `key.spent` seeds a key no instance has admitted yet. Throws RedisUnavailable: the caller
   * refuses, or admits on this instance's figures, per `redis.on_error`.
   */
  async reserve(key: KeyFigures, usd: number | null): Promise<Hold> {
    const id = `rsr:${key.id}:${crypto.randomUUID().replaceAll('-', '')}`
    const amount = usd !== null && Number.isFinite(usd) && usd > 0 ? usd : 0
    let r: [number, string, string]
    // its resolvers, with no executor closure an admission
    const answer = Promise.withResolvers<[number, string, string]>()
    let list = this.asked.get(key.id)
    if (!list) this.asked.set(key.id, (list = []))
    list.push({ args: [String(key.credits), String(key.spent), String(amount), id], resolve: answer.resolve, reject: answer.reject })
    if (this.asked.size === 1 && list.length === 1) this.redis.soon(this.sendAsked)
    try {
      r = await answer.promise
    } catch (e) {
      throw asUnavailable(e, this.log)
    }
    if (r[0] !== 1) return { admitted: false, spent: Number(r[1]), reserved: Number(r[2]) }
    return { admitted: true, reservationId: amount > 0 ? id : undefined }
  }

  /** Admissions asked this turn, by key. */
  private asked = new Map<string, Asked[]>()

  /** Each key's admissions of this turn in one call (a key's entries share one hash slot), its waiting settlements with the first. */
  private readonly sendAsked = () => {
    const asked = this.asked
    this.asked = new Map()
    for (const [keyId, list] of asked) {
      let along = this.pending.get(keyId)
      if (along && along.rids.length <= SETTLE_CHUNK) this.pending.delete(keyId)
      else along = undefined
      for (let i = 0; i < list.length; i += RESERVE_CHUNK) {
        const part = list.slice(i, i + RESERVE_CHUNK)
        const p = i === 0 ? along : undefined
        const args = [String(this.ttlMs), ...settlementArgs(p)]
        for (const a of part) args.push(...a.args)
        this.redis.eval(RESERVE, keysOf(this.redis.settings.prefix, keyId), args).then(
          (out) => {
            if (p) this.settling -= p.n
            const answers = out as [number, string, string][]
            for (let j = 0; j < part.length; j++) part[j]!.resolve(answers[j]!)
          },
          (e) => {
            if (p) this.unsent(keyId, p, false, e)
            for (const a of part) a.reject(e)
          },
        )
      }
    }
  }

  /** The actual cost replaces the reservation, in one step (a moment after the call). */
  settle(reservationId: string | undefined, keyId: string | undefined, usd: number): void {
    const amount = Number.isFinite(usd) && usd > 0 ? usd : 0
    const key = keyId ?? (reservationId && keyOfReservation(reservationId))
    if (key) void this.move(reservationId, key, amount)
  }

  unsettle(keyId: string, usd: number): void {
    if (Number.isFinite(usd) && usd > 0) void this.move(undefined, keyId, -usd)
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

  /**
   * Ends a reservation and moves the key's spent by `amount` (signed), in one step with the
   * key's other settlements of the next few ms, and with its next admission if one comes then.
   * A reservation ends only with its cost counted, so the cost is never hidden from admission
   * meanwhile. Never throws.
   */
  private move(reservationId: string | undefined, keyId: string, amount: number): void {
    const rid = reservationId && keyOfReservation(reservationId) === keyId ? reservationId : ''
    if (!rid && amount === 0) return
    let p = this.pending.get(keyId)
    if (!p) this.pending.set(keyId, (p = { rids: [], amount: 0, n: 0 }))
    if (rid) p.rids.push(rid)
    p.amount += amount
    p.n++
    this.settling++
    this.flushTimer ??= setTimeout(this.flush, SETTLE_WAIT_MS)
  }

  /** The settlements no admission took along: a call each key. */
  private readonly flush = () => {
    this.flushTimer = undefined
    const batch = this.pending
    this.pending = new Map()
    for (const [keyId, p] of batch) void this.send(keyId, p)
  }

  private async send(keyId: string, p: Pending): Promise<void> {
    let costSent = false
    try {
      for (let i = 0; i === 0 || i < p.rids.length; i += SETTLE_CHUNK) {
        // the costs go with the first call: a later one failing leaves only reservations, which lapse
        const part = { rids: p.rids.slice(i, i + SETTLE_CHUNK), amount: costSent ? 0 : p.amount, n: 0 }
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
    if (!costSent && p.amount !== 0) this.owed.set(keyId, (this.owed.get(keyId) ?? 0) + p.amount)
    if (!(e instanceof RedisUnavailable)) this.log.error('redis credits: settle failed', { key_id: keyId, error: String(e) })
    this.settling -= p.n
  }

  /** Shutdown: the waiting settlements go now, and are waited for (bounded by the store's timeout). */
  async stop(): Promise<void> {
    clearTimeout(this.flushTimer)
    this.flush()
    const until = Date.now() + this.redis.settings.timeoutMs + 100
    while (this.settling > 0 && Date.now() < until) await Bun.sleep(2)
  }

  private payOwed() {
    const owed = this.owed
    this.owed = new Map()
    for (const [keyId, usd] of owed) this.move(undefined, keyId, usd)
  }
}
