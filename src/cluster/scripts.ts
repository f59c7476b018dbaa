// The Lua that runs in the shared Redis for rate limits and credits. A turn of the loop's
// rate-limit takes and credit admissions go in one call of TURN (SharedRedis.part): one
// command a turn, however many requests and keys asked, and one `TIME` for all of them.
// Each part of the call is decided as a call of its own would decide it; a part Redis cannot
// read (a bucket of the wrong type) fails alone, as its own call would have.
//
// Keys, per API key (hash tags kept, though Bun's RedisClient does not speak Redis Cluster):
//   <prefix>rl:<bucket>  zset  one rate-limit window: member a request, score its time
//   <prefix>cr:{id}      hash  spent: the key's settled spend, seeded from the database the
//                              first time any instance admits the key, then moved only here
//   <prefix>rsv:{id}     hash  reservation id → estimated USD of a request in progress;
//                              `sum` and `n`: their sum and count (see HELD)
//   <prefix>rsvx:{id}    zset  reservation id → when it lapses (a request that died unsettled)
import { ROUND_USD_LUA } from '../lib/usd.ts'
import { script } from './redis.ts'

export const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// A take: every limit of a group allows the request, or none counts it. KEYS from k + 1, one a
// limit; ARGV from a: a member (its own is `member`: a repeat's differs, the rest is shared),
// how many limits, how many of them form its first group, then each limit's count and window.
// Only when the first group allows the request is the rest taken, all-or-nothing too (an
// address's limit, then a key's: the same answers as two takes). Answers { now, then per
// group: allowed, then per limit: remaining, reset } (a group not reached is left out). A
// bucket several takes of the call share (one key's requests) is trimmed and read once, its
// count and oldest time carried from take to take, and written once at the end (takesWritten).
const TAKE = `
local seen, count, oldest, window, added, broken = {}, {}, {}, {}, {}, {}
local function load(key, w)
  if seen[key] then return broken[key] end
  seen[key] = true
  local r = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', now - w)
  if type(r) == 'table' and r.err then
    broken[key] = r.err
    return r.err
  end
  window[key] = w
  count[key] = redis.call('ZCARD', key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #first > 0 then oldest[key] = tonumber(first[2]) end
  added[key] = {}
  return nil
end
local function take(k, a, member)
  local n, split = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local out = { now }
  local failed = nil
  local function group(from, to)
    local allowed = 1
    for i = from, to do
      failed = load(KEYS[k + i], tonumber(ARGV[a + 2 + 2 * i]))
      if failed then return 0 end
      if count[KEYS[k + i]] >= tonumber(ARGV[a + 1 + 2 * i]) then allowed = 0 end
    end
    out[#out + 1] = allowed
    for i = from, to do
      local key = KEYS[k + i]
      if allowed == 1 then
        count[key] = count[key] + 1
        local add = added[key]
        add[#add + 1] = now
        add[#add + 1] = member
        if not oldest[key] then oldest[key] = now end
      end
      out[#out + 1] = tonumber(ARGV[a + 1 + 2 * i]) - count[key]
      out[#out + 1] = (oldest[key] or now) + tonumber(ARGV[a + 2 + 2 * i])
    end
    return allowed
  end
  if group(1, split) == 1 and split < n then group(split + 1, n) end
  return failed or out
end
local function takesWritten()
  for key, add in pairs(added) do
    if #add > 0 then
      redis.call('ZADD', key, unpack(add))
      redis.call('PEXPIRE', key, window[key])
    end
  end
end
`

// The sum of a key's live holds, kept in its rsv hash beside them (fields `sum`, and `n`: how
// many holds it counts), so that an admission reads one figure instead of adding up every hold
// again: with a thousand streams open on a key, that sum cost Redis about half a millisecond an
// admission. The hash has the holds' lifetime, so the sum lapses with them. A count that does
// not match the hash (holds written or ended by an older gateway) is summed again from the
// holds. As the memory ledger's sum, within a trillionth of a dollar of zero counts as zero.
// Stored with 17 digits: a double read back is the same double.
export const HELD = `
-- the key's holds (their sum and count), with the amounts of the holds ids in the same
-- read: f[3], f[4], ...
local function holdsOf(rsv, ids)
  local f = redis.call('HMGET', rsv, 'sum', 'n', unpack(ids))
  local n = tonumber(f[2])
  local len = redis.call('HLEN', rsv)
  if n and len == n + 2 then return { rsv = rsv, sum = tonumber(f[1]), n = n, dirty = false }, f end
  local h = { rsv = rsv, sum = 0, n = 0, dirty = len > 0 }
  if len == 0 then return h, f end
  local all = redis.call('HGETALL', rsv)
  for i = 1, #all, 2 do
    if all[i] ~= 'sum' and all[i] ~= 'n' then
      h.sum = h.sum + tonumber(all[i + 1])
      h.n = h.n + 1
    end
  end
  return h, f
end
-- ends the holds ids (their amounts: amounts[at + 1], ...), taken off the sum
local function unhold(h, rsvx, ids, amounts, at)
  local seen = {}
  for i = 1, #ids do
    local v = tonumber(amounts[at + i])
    if v and not seen[ids[i]] then
      seen[ids[i]] = true
      h.sum = h.sum - v
      h.n = h.n - 1
      h.dirty = true
    end
  end
  redis.call('HDEL', h.rsv, unpack(ids))
  redis.call('ZREM', rsvx, unpack(ids))
end
-- writes the sum back, in one HSET with the new holds' fields (id, usd, ...)
local function keep(h, fields)
  if h.n == 0 then
    if h.dirty then redis.call('HDEL', h.rsv, 'sum', 'n') end
    return
  end
  if not h.dirty and #fields == 0 then return end
  if math.abs(h.sum) < 1e-12 then h.sum = 0 end
  fields[#fields + 1] = 'sum'
  fields[#fields + 1] = string.format('%.17g', h.sum)
  fields[#fields + 1] = 'n'
  fields[#fields + 1] = h.n
  redis.call('HSET', h.rsv, unpack(fields))
end
`

// A key's spent moved by `usd` (signed; text), the sum rounded as every money sum is (lib/usd.ts):
// HINCRBYFLOAT kept the noise of each sum. Answers the new spent, as text.
const ADD_SPENT = `
local function addSpent(cr, usd)
  local v = (tonumber(redis.call('HGET', cr, 'spent')) or 0) + tonumber(usd)
  local s = ${ROUND_USD_LUA}
  redis.call('HSET', cr, 'spent', s)
  return s
end
`

// A key's settlement: ARGV from `at`: usd (negative: a cost taken back), when it was charged at
// the latest on Redis's clock ('' when now: a settlement of the last few ms), the number of
// reservations it ends, then their ids (the key's settlements of a few ms go together).
// `spent`, `seededAt`: the key's spent and when it was seeded, as read (spent false: unseeded).
// An unseeded key is left unseeded: its first admission reads the database, which will have this
// cost (or not have it) by then. A cost owed while Redis was away, under a seed made after its
// time, is left out too (dropped): that seed was read from the database and an instance's figure
// after it (Redis lost the key meanwhile), and adding it counted it twice; the instance raises
// the spent to the database's figure instead. Under a seed made before, it is added.
// Returns where the ARGV after it begins, the key's holds (the caller keeps them), the spent,
// and whether a cost was dropped.
const SETTLE_FN = `${HELD}${ADD_SPENT}
local function settle(cr, rsv, rsvx, at, spent, seededAt)
  local n = tonumber(ARGV[at + 2])
  local ids = { unpack(ARGV, at + 3, at + 2 + n) }
  local h, f = holdsOf(rsv, ids)
  if n > 0 then unhold(h, rsvx, ids, f, 2) end
  local charged = ARGV[at + 1]
  local dropped = false
  if spent and tonumber(ARGV[at]) ~= 0 then
    if charged == '' or (tonumber(seededAt) or 0) <= tonumber(charged) then
      spent = addSpent(cr, ARGV[at])
    else
      dropped = true
    end
  end
  return at + 3 + n, h, spent, dropped
end
`

// A key's admissions: KEYS k + 1 .. k + 3: cr, rsv, rsvx; ARGV from a to last: the holds' ttl
// in ms, then a settlement (settle; none: 0, '', 0), then per admission: credits, seed spent, usd,
// reservation id. The key's settlements waiting on the instance count first, as they happened
// first, then the holds past their time lapse. Its admissions are decided in the order asked,
// as separate calls would decide them: the spent and the sum of live holds are read once and
// carried from one to the next. Answers per admission { admitted (1/0), spent, reserved }, the
// first with three more: 1 when this call seeded the key's spent (RAISE_SEED follows), else 0;
// the seed's name (the first admission's reservation id when it was made; '' for a seed made
// before seeds were named); and Redis's time (the instance's last word from Redis, which dates
// the costs it owes should Redis go away: settle). A seed says when it was made (`seeded_at`).
const RESERVE = `
local function reserve(k, a, last)
  local cr, rsv, rsvx = KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local ttl = tonumber(ARGV[a])
  local figures = redis.call('HMGET', cr, 'spent', 'seed', 'seeded_at')
  local seed = figures[2] or ''
  local after, h, spent = settle(cr, rsv, rsvx, a + 1, figures[1], figures[3])
  local lapsed = redis.call('ZRANGEBYSCORE', rsvx, '-inf', now, 'LIMIT', 0, 1000)
  while #lapsed > 0 do
    unhold(h, rsvx, lapsed, redis.call('HMGET', rsv, unpack(lapsed)), 0)
    lapsed = redis.call('ZRANGEBYSCORE', rsvx, '-inf', now, 'LIMIT', 0, 1000)
  end
  local seeded = not spent
  if seeded then
    spent = ARGV[after + 1]
    seed = ARGV[after + 3]
    redis.call('HSET', cr, 'spent', spent, 'seed', seed, 'seeded_at', now)
  end
  spent = tonumber(spent)
  -- the new holds go in keep's one HSET, and in one ZADD
  local fields, lapses = {}, {}
  local out = {}
  for b = after, last, 4 do
    local usd = tonumber(ARGV[b + 2])
    local figures = { 0, string.format('%.17g', spent), string.format('%.17g', h.sum) }
    out[#out + 1] = figures
    if tonumber(ARGV[b]) - spent - h.sum > 0 then
      figures[1] = 1
      if usd > 0 then
        fields[#fields + 1] = ARGV[b + 3]
        fields[#fields + 1] = ARGV[b + 2]
        lapses[#lapses + 1] = now + ttl
        lapses[#lapses + 1] = ARGV[b + 3]
        h.sum = h.sum + usd
        h.n = h.n + 1
      end
    end
  end
  if out[1] then
    out[1][4] = seeded and 1 or 0
    out[1][5] = seed
    out[1][6] = now
  end
  keep(h, fields)
  if #lapses > 0 then
    redis.call('ZADD', rsvx, unpack(lapses))
    redis.call('PEXPIRE', rsv, ttl)
    redis.call('PEXPIRE', rsvx, ttl)
  end
  return out
end
`

// The turn's call. ARGV, per part: its kind ('t' a take, 'T' a repeat of the call's last 't',
// 'r' a key's admissions), how many KEYS and ARGV are its own, then its ARGV; KEYS, each part's
// in the same order. A repeat has no KEYS and one ARGV, its member: it is taken in the windows
// of that 't' with its limits. Answers per part, in order: its answer, or the error Redis gave
// it as a string. The takes go first, with their windows written, then the admissions: a call
// that fails as a whole (Redis out of memory for the windows) has held nothing.
export const TURN = script(`${NOW}${TAKE}${SETTLE_FN}${RESERVE}
local function run(f, ...)
  local ok, r = pcall(f, ...)
  if ok then return r end
  if type(r) == 'table' and r.err then return r.err end
  return tostring(r)
end
local answers, reserves = {}, {}
local k, a, i = 0, 1, 0
-- where the last 't' part's KEYS and ARGV begin (a repeat's limits)
local tk, ta = nil, nil
while a <= #ARGV do
  local kind, nk, na = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  i = i + 1
  if kind == 't' then
    tk, ta = k, a + 3
    answers[i] = run(take, k, a + 3, ARGV[a + 3])
  elseif kind == 'T' then
    if ta then answers[i] = run(take, tk, ta, ARGV[a + 3]) else answers[i] = 'ERR a repeat with no take before it' end
  elseif kind == 'r' then reserves[#reserves + 1] = { i, k, a + 3, a + 2 + na }
  else answers[i] = 'ERR unknown part ' .. tostring(kind) end
  k = k + nk
  a = a + 3 + na
end
takesWritten()
for _, r in ipairs(reserves) do answers[r[1]] = run(reserve, r[2], r[3], r[4]) end
return answers
`)

// KEYS: cr, rsv, rsvx. ARGV: a settlement (settle), when no admission of its key came to take
// it along. Answers { 1 when a cost was dropped, else 0; the seed's name; the spent ('' unseeded) }.
export const SETTLE = script(`${SETTLE_FN}
local figures = redis.call('HMGET', KEYS[1], 'spent', 'seed', 'seeded_at')
local _, h, spent, dropped = settle(KEYS[1], KEYS[2], KEYS[3], 1, figures[1], figures[3])
keep(h, {})
return { dropped and 1 or 0, figures[2] or '', spent and tostring(spent) or '' }
`)

// KEYS: cr, rsv, rsvx. The spent (false when unseeded) and the sum of live reservations.
export const FIGURES = script(`${NOW}
local reserved = 0
local live = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf')
for i = 1, #live do reserved = reserved + (tonumber(redis.call('HGET', KEYS[2], live[i])) or 0) end
return { redis.call('HGET', KEYS[1], 'spent'), tostring(reserved) }
`)

// KEYS: rsv, rsvx. ARGV: the holds' ttl in ms, then reservation ids of requests still in
// progress: each lapses the ttl from now (one that ended or lapsed already is left out), and the
// key's two entries, which a hold made last sets to expire a ttl after it, live as long.
export const RENEW = script(`${NOW}
local ttl = tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do n = n + redis.call('ZADD', KEYS[2], 'XX', 'CH', now + ttl, ARGV[i]) end
if n > 0 then
  for _, k in ipairs(KEYS) do
    if redis.call('PTTL', k) < ttl then redis.call('PEXPIRE', k, ttl) end
  end
end
return n
`)

// KEYS: cr. ARGV: usd, the seed's name. A key's spent, seeded from one instance's figure, raised
// by what the database holds beyond it; nothing when that seed has gone (the hash lost again:
// the next admission seeds it and raises its own).
export const RAISE_SEED = script(`${ADD_SPENT}
if redis.call('HGET', KEYS[1], 'seed') == ARGV[2] then addSpent(KEYS[1], ARGV[1]) end
return 1
`)
