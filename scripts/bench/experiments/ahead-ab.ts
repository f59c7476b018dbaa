// Experiment (docs/bench.md, cluster mode): a busy key at a steady rate (one take a ms) through
// the RedisRateLimiter of two trees in turn, in one process: the client's CPU a take and Redis's
// own time in its scripts a take (INFO commandstats). For a change to how takes ahead are sent,
// beside the gateway-wide measure of cluster-wakes.ts. CROWD=N: N takes of the key asked in each
// turn instead, as a crowded loop asks them (nothing is then taken ahead; one call a turn).
//   SWITCHYARD_TEST_REDIS_URL=… bun scripts/bench/experiments/ahead-ab.ts <tree> <tree> [rounds] [takes]
import { RedisClient } from 'bun'
import { resolve } from 'node:path'

const [treeA = '.', treeB = '.', rounds = '3', takes = '3000'] = process.argv.slice(2)
const url = process.env.SWITCHYARD_TEST_REDIS_URL
if (!url) throw new Error('set SWITCHYARD_TEST_REDIS_URL')
const admin = new RedisClient(url)
const crowd = Number(process.env.CROWD ?? 1)

/** Microseconds Redis has spent in script calls so far. */
async function scriptUsec(): Promise<number> {
  const info = String(await admin.send('INFO', ['commandstats']))
  let us = 0
  for (const m of info.matchAll(/^cmdstat_(\w+):calls=\d+,usec=(\d+)/gm)) if (m[1]!.startsWith('eval')) us += Number(m[2])
  return us
}

async function run(tree: string) {
  const root = resolve(tree)
  const { SharedRedis } = await import(root + '/src/cluster/redis.ts')
  const { RedisRateLimiter } = await import(root + '/src/auth/redis-ratelimit.ts')
  const { createLogger } = await import(root + '/src/http/log.ts')
  const log = createLogger('silent')
  const redis = new SharedRedis({ url, onError: 'deny', timeoutMs: 2000, prefix: 'ab' + crypto.randomUUID().slice(0, 8) + ':', takeAhead: true }, log)
  const limiter = new RedisRateLimiter(redis, log)
  const id = crypto.randomUUID().slice(0, 8)
  const ip = [{ bucket: 'ip:10.0.0.1', limit: 1_000_000, windowMs: 60_000, scope: 'ip' }]
  const key = [
    { bucket: 'k:' + id, limit: 1_000_000, windowMs: 60_000, scope: 'key' },
    { bucket: 'kb:' + id, limit: 100_000, windowMs: 1_000, scope: 'key' },
  ]
  const step = async () => {
    if (crowd === 1) await limiter.takeBoth(ip, key)
    else await Promise.all(Array.from({ length: crowd }, () => limiter.takeBoth(ip, key)))
    await Bun.sleep(1)
  }
  for (let i = 0; i < 500; i++) await step() // warm: the depth kept ready settles
  const u0 = await scriptUsec()
  const c0 = process.cpuUsage()
  const n = Math.ceil(Number(takes) / crowd) * crowd
  for (let i = 0; i < n / crowd; i++) await step()
  const c = process.cpuUsage(c0)
  const u1 = await scriptUsec()
  limiter.stop()
  redis.close()
  return { cpu: (c.user + c.system) / n, redis: (u1 - u0) / n }
}

for (let r = 1; r <= Number(rounds); r++) {
  for (const t of [treeA, treeB]) {
    const x = await run(t)
    console.log(`round ${r} ${t}: client CPU ${x.cpu.toFixed(1)} µs a take, Redis's script time ${x.redis.toFixed(1)} µs a take`)
  }
}
admin.close()
process.exit(0)
