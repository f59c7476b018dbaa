// Experiment (docs/bench.md, cluster mode): what a funded key's admission costs Redis while
// many of the key's requests are open. Each tree's gateway runs in cluster mode with a funded
// key; the fake upstream holds every call open (held-upstream.ts), so N requests stay open,
// each with its hold in Redis. Then M more are sent, K at a time, and Redis's own CPU for the
// script calls they make (INFO commandstats) is read. One gateway at a time, trees alternating.
//   bun scripts/bench/experiments/open-holds.ts <tree>[,<tree>...] [N=1000] [M=500] [rounds=2] [K=16]
import { join, resolve } from 'node:path'
import { RedisClient } from 'bun'
import { chatCall, fundedKey } from '../call.ts'
import { statusOnSocket } from '../lean-client.ts'
import { openStores } from '../cluster-stores.ts'
import { pinSelf, ROOT, spawnGateway, spawnListening } from '../processes.ts'

const [treesArg = '.', n = '1000', m = '500', rounds = '2', k = '16'] = process.argv.slice(2)
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const N = Number(n)
const M = Number(m)
const K = Number(k)
const ADMIN = 'bench-admin-' + crypto.randomUUID()
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')

pinSelf(0)
const stores = await openStores(0)
const redis = new RedisClient(stores.env.SWITCHYARD_REDIS_URL!)

async function evalStats(): Promise<{ calls: number; usec: number }> {
  const info = (await redis.send('INFO', ['commandstats'])) as string
  const hit = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(info)
  return { calls: Number(hit?.[1] ?? 0), usec: Number(hit?.[2] ?? 0) }
}

for (let round = 1; round <= Number(rounds); round++) {
  for (const root of trees) {
    const up = await spawnListening(['taskset', '-c', '0', process.execPath, join(ROOT, 'scripts/bench/experiments/held-upstream.ts')], { env: { PATH: process.env.PATH ?? '' }, cwd: ROOT })
    const gw = await spawnGateway({ core: 1, upstream: up.url, key: bootstrap, root, logLevel: 'warn', env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, ...stores.env } })
    const key = await fundedKey(gw.url, ADMIN, 'open holds')
    const one = chatCall('chat', `${gw.url}/api/alpha/v1`, key, 'gpt-4o-mini')
    const count = async () => ((await (await fetch(`${up.url}/count`)).json()) as { open: number }).open
    const until = async (k: number) => {
      for (const end = Date.now() + 60_000; (await count()) < k && Date.now() < end; ) await Bun.sleep(50)
    }
    const replies: Promise<number>[] = []
    for (let i = 0; i < N; i++) {
      replies.push(statusOnSocket(one))
      if (i % 200 === 199) await Bun.sleep(5)
    }
    await until(N)
    // the gateway's own calls while nothing is asked (the routing health read, 4 a second): taken off below
    const idle0 = await evalStats()
    await Bun.sleep(3_000)
    const idle1 = await evalStats()
    const idlePerMs = { calls: (idle1.calls - idle0.calls) / 3_000, usec: (idle1.usec - idle0.usec) / 3_000 }
    const before = await evalStats()
    const t0 = performance.now()
    // M more, K at a time, each admitted while the others are open
    for (let i = 0; i < M; i += K) {
      for (let j = i; j < Math.min(M, i + K); j++) replies.push(statusOnSocket(one))
      await until(N + Math.min(M, i + K))
    }
    const raw = await evalStats()
    if (process.env.COMMANDS) console.log(((await redis.send('INFO', ['commandstats'])) as string).split('\n').filter((l) => l.startsWith('cmdstat')).map((l) => l.replace(/,rejected.*/, '')).join('\n'))
    const ms = performance.now() - t0
    const after = { calls: raw.calls - idlePerMs.calls * ms, usec: raw.usec - idlePerMs.usec * ms }
    await fetch(`${up.url}/release`, { method: 'POST' })
    const ok = (await Promise.all(replies)).filter((s) => s === 200).length
    const calls = after.calls - before.calls
    const label = root === ROOT ? 'this tree' : root
    console.log(`round ${round} ${label}: ${N} open, ${M} more ${K} at a time: ${calls.toFixed(0)} script calls (the idle gateway's taken off: ${(idlePerMs.calls * 1000).toFixed(1)} a second, ${(idlePerMs.usec).toFixed(0)} ms of Redis a second), Redis ${((after.usec - before.usec) / M).toFixed(1)} µs a request (${((after.usec - before.usec) / Math.max(1, calls)).toFixed(1)} a call); ${ok} of ${N + M} answered 200`)
    await gw.stop()
    await up.stop()
  }
}
redis.close()
await stores.close()
process.exit(0)
