// Key-pool rounds shared by every instance: one Redis counter per provider (a field of one
// hash), HINCRBY once per call. The call itself cannot wait for Redis (choosing a key is
// synchronous), so an instance takes the position the counter will reach with its own increment:
// the last value Redis answered it, plus its increments still under way, plus one. Instances
// taking turns thus go round the pool together (each learns the others' turns from its own
// answers); only calls at the very same moment on two instances may share a position. With
// Redis away the instance goes on counting by itself.
import { script, type SharedRedis } from '../cluster/redis.ts'
import type { PoolPosition } from './pool-position.ts'

const DAY_MS = 86_400_000

const ADVANCE = script(`
local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
`)

interface Round {
  /** The counter as Redis last answered this instance. */
  last: number
  inflight: number
}

export class RedisPoolPosition implements PoolPosition {
  private rounds = new Map<string, Round>()
  private readonly key: string

  constructor(private readonly redis: SharedRedis) {
    this.key = redis.settings.prefix + 'keypool:pos'
  }

  next(providerId: string, size: number): number {
    if (size <= 1) return 0
    let r = this.rounds.get(providerId)
    if (!r) this.rounds.set(providerId, (r = { last: 0, inflight: 0 }))
    const expected = r.last + r.inflight + 1
    r.inflight++
    const round = r
    this.redis.eval(ADVANCE, [this.key], [providerId, String(DAY_MS)]).then(
      (n) => {
        round.last = Number(n)
        round.inflight--
      },
      () => {
        round.last++
        round.inflight--
      },
    )
    return (expected - 1) % size
  }
}
