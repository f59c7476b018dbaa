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
// admissions of one turn of the loop go in one call, and so do its settlements.
import type { Logger } from '../http/log.ts'
import { asUnavailable, RedisUnavailable, script, type SharedRedis } from '../cluster/redis.ts'
import { RESERVATION_TTL_MS, type Hold, type KeyFigures, type Ledger } from './ledger.ts'

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// KEYS: cr, rsv, rsvx. ARGV: ttl ms, then per admission: credits, seed spent, usd,
// reservation id. A key's admissions asked in one turn of the loop go in one call, decided in
// the order asked as separate calls would decide them: the spent and the sum of live holds are
// read once and carried from one to the next. Returns per admission { admitted (1/0), spent,
// reserved }.
const RESERVE = script(`${NOW}
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for i = 1, #lapsed do redis.call('HDEL', KEYS[2], lapsed[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('HSETNX', KEYS[1], 'spent', ARGV[3])
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent'))
local reserved = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do reserved = reserved + tonumber(v) end
local ttl = tonumber(ARGV[1])
local held = false
local out = {}
for a = 1, #ARGV - 1, 4 do
  local usd = tonumber(ARGV[a + 3])
  if not (tonumber(ARGV[a + 1]) - spent - reserved > 0) then
    out[#out + 1] = { 0, tostring(spent), tostring(reserved) }
  else
    out[#out + 1] = { 1, tostring(spent), tostring(reserved) }
    if usd > 0 then
      redis.call('HSET', KEYS[2], ARGV[a + 4], ARGV[a + 3])
      redis.call('ZADD', KEYS[3], now + ttl, ARGV[a + 4])
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

// KEYS: cr, rsv, rsvx. ARGV: usd (negative: a cost taken back), then the reservations it
// ends (none or many: the settlements of one key made in one turn of the loop go together).
// An unseeded key is left unseeded: its first admission reads the database, which will have
// this cost (or not have it) by then.
const SETTLE = script(`
if #ARGV > 1 then
  redis.call('HDEL', KEYS[2], unpack(ARGV, 2))
  redis.call('ZREM', KEYS[3], unpack(ARGV, 2))
end
if tonumber(ARGV[1]) ~= 0 and redis.call('HEXISTS', KEYS[1], 'spent') == 1 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'spent', ARGV[1])
end
return 1
`)

/** Reservations ended by one script call at most (Lua's unpack has a stack limit). */
const SETTLE_CHUNK = 500

/** A key's settlements of this turn of the loop: the reservations they end and their costs' sum. */
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
    try {
      r = await new Promise((resolve, reject) => {
        let list = this.asked.get(key.id)
        if (!list) this.asked.set(key.id, (list = []))
        list.push({ args: [String(key.credits), String(key.spent), String(amount), id], resolve, reject })
        if (this.asked.size === 1 && list.length === 1) setImmediate(this.sendAsked)
      })
    } catch (e) {
      throw asUnavailable(e, this.log)
    }
    if (r[0] !== 1) return { admitted: false, spent: Number(r[1]), reserved: Number(r[2]) }
    return { admitted: true, reservationId: amount > 0 ? id : undefined }
  }

  /** Admissions asked this turn, by key. */
  private asked = new Map<string, Asked[]>()

  /** Each key's admissions of this turn in one call (a key's entries share one hash slot). */
  private readonly sendAsked = () => {
    const asked = this.asked
    this.asked = new Map()
    for (const [keyId, list] of asked) {
      for (let i = 0; i < list.length; i += RESERVE_CHUNK) {
        const part = list.slice(i, i + RESERVE_CHUNK)
        const args = [String(this.ttlMs)]
        for (const a of part) args.push(...a.args)
        this.redis.eval(RESERVE, keysOf(this.redis.settings.prefix, keyId), args).then(
          (out) => part.forEach((a, j) => a.resolve((out as [number, string, string][])[j]!)),
          (e) => part.forEach((a) => a.reject(e)),
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

  /** This turn's settlements by key, sent together once the turn's work is done. */
  private pending = new Map<string, Pending>()
  private flushing = false

  /**
   * Ends a reservation and moves the key's spent by `amount` (signed), in one step with the
   * key's other settlements of this turn of the loop (under load, one call for dozens of
   * requests). A reservation ends only with its cost counted, so the cost is never hidden
   * from admission meanwhile. Never throws.
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
    if (this.flushing) return
    this.flushing = true
    queueMicrotask(() => {
      this.flushing = false
      const batch = this.pending
      this.pending = new Map()
      for (const [keyId, p] of batch) void this.send(keyId, p)
    })
  }

  private async send(keyId: string, p: Pending): Promise<void> {
    let costSent = false
    try {
      for (let i = 0; i === 0 || i < p.rids.length; i += SETTLE_CHUNK) {
        // the costs go with the first call: a later one failing leaves only reservations, which lapse
        await this.redis.eval(SETTLE, keysOf(this.redis.settings.prefix, keyId), [String(costSent ? 0 : p.amount), ...p.rids.slice(i, i + SETTLE_CHUNK)])
        costSent = true
      }
    } catch (e) {
      // the reservation lapses by itself; the cost (or its taking back) must not be lost
      if (!costSent && p.amount !== 0) this.owed.set(keyId, (this.owed.get(keyId) ?? 0) + p.amount)
      if (!(e instanceof RedisUnavailable)) this.log.error('redis credits: settle failed', { key_id: keyId, error: String(e) })
    } finally {
      this.settling -= p.n
    }
  }

  private payOwed() {
    const owed = this.owed
    this.owed = new Map()
    for (const [keyId, usd] of owed) this.move(undefined, keyId, usd)
  }
}
