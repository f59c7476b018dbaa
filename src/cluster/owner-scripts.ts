// The Lua of whose credit holds are whose among gateways sharing Redis (billing/redis-owner.ts).
//   <prefix>owners        zset  gateway (owner) id → its last beat, on Redis's clock (ms)
//   <prefix>owners:swept  set   owners whose holds a sweep deleted, until their next beat
// A hold's id ends with 32 hex digits, the first 12 of them its owner's id (redis-ledger.ts): an
// id whose owner never beat (a hold of an older gateway) belongs to no known owner, and is
// never swept; it lapses as any hold nobody renews.
import { script } from './redis.ts'
import { HELD, NOW } from './scripts.ts'

/** The owner of a hold id (nil: not a hold, or no owner in it). */
const OWNER_OF = `
local function ownerOf(id)
  if #id > 37 and string.sub(id, 1, 4) == 'rsr:' and string.sub(id, -33, -33) == ':' then return string.sub(id, -32, -21) end
  return nil
end
`

// KEYS: owners, swept. ARGV: this owner's id, how long an owner's entry outlives its last beat
// (ms). Its beat, now; and owners silent for that long are forgotten (their holds have lapsed).
// Answers { now, its previous beat ('' none), 1 when a sweep deleted its holds since }.
export const BEAT = script(`${NOW}
local prev = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now, ARGV[1])
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]), 'LIMIT', 0, 100)
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('SREM', KEYS[2], unpack(gone))
end
return { now, prev or '', redis.call('SREM', KEYS[2], ARGV[1]) }
`)

// KEYS: rsv, rsvx (one API key's holds), owners, swept. ARGV: this owner's id, stale (ms), confirm
// (ms), then per owner suspected dead: its id, its last beat as seen then, and when it was first
// seen so (Redis ms). An owner's holds of this key are deleted only when its last beat is still
// the one seen, at least `stale` old, and was first seen so at least `confirm` ago: two looks,
// both while Redis ran, with no beat of it between (a Redis stall delays every beat, and the
// first look after it may see all owners stale; the owner's beat queued meanwhile lands long
// before the second). The owner is marked swept: its next beat says so, and a live one writes
// its holds again. Answers { now, holds deleted, then per other owner with holds here: its id,
// its last beat ('' unknown) }.
export const SWEEP = script(`${NOW}${HELD}${OWNER_OF}
local rsv, rsvx, owners, swept = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local me, stale, confirm = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local byOwner, order = {}, {}
for _, id in ipairs(redis.call('HKEYS', rsv)) do
  local o = ownerOf(id)
  if o and o ~= me then
    local ids = byOwner[o]
    if not ids then
      ids = {}
      byOwner[o] = ids
      order[#order + 1] = o
    end
    ids[#ids + 1] = id
  end
end
local beat = {}
for _, o in ipairs(order) do beat[o] = redis.call('ZSCORE', owners, o) end
local deleted, h = 0, nil
for i = 4, #ARGV, 3 do
  local o, seen, at = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local ids, b = byOwner[o], beat[o] and tonumber(beat[o])
  if ids and b and seen and at and b == seen and now - b >= stale and now - at >= confirm then
    for j = 1, #ids, 500 do
      local part = { unpack(ids, j, math.min(j + 499, #ids)) }
      local f
      if h then f = redis.call('HMGET', rsv, 'sum', 'n', unpack(part)) else h, f = holdsOf(rsv, part) end
      unhold(h, rsvx, part, f, 2)
      deleted = deleted + #part
    end
    redis.call('SADD', swept, o)
    byOwner[o] = nil
  end
end
if h then keep(h, {}) end
local out = { now, deleted }
for _, o in ipairs(order) do
  if byOwner[o] then
    out[#out + 1] = o
    out[#out + 1] = beat[o] or ''
  end
end
return out
`)

// KEYS: rsv, rsvx. ARGV: the holds' ttl (ms), then per hold: its id, its USD. This owner's holds
// of one key written again (a sweep took them while it lived): each missing one, lapsing a ttl
// from now; one still there is left as it is. Answers how many were written.
export const REWRITE = script(`${NOW}${HELD}
local ttl = tonumber(ARGV[1])
local ids, amounts = {}, {}
for i = 2, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  amounts[#amounts + 1] = ARGV[i + 1]
end
local h, f = holdsOf(KEYS[1], ids)
local fields, lapses = {}, {}
for i = 1, #ids do
  if not f[2 + i] then
    fields[#fields + 1] = ids[i]
    fields[#fields + 1] = amounts[i]
    lapses[#lapses + 1] = now + ttl
    lapses[#lapses + 1] = ids[i]
    h.sum = h.sum + tonumber(amounts[i])
    h.n = h.n + 1
  end
end
if #lapses == 0 then return 0 end
keep(h, fields)
redis.call('ZADD', KEYS[2], unpack(lapses))
for _, k in ipairs(KEYS) do
  if redis.call('PTTL', k) < ttl then redis.call('PEXPIRE', k, ttl) end
end
return #lapses / 2
`)
