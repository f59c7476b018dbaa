// Experiment (docs/bench.md, cluster mode): gateway trees side by side, each in cluster mode and
// embedded (for the difference), with a funded key (or the unlimited bootstrap key). All the
// gateways run at once, pinned to core 1; the stores, the upstream and this driver on core 0.
// Per round: a request's latency one at a time, asked of each gateway in turn (no queueing, so
// the round trips show whole, and neighbouring samples share the machine's state); then
// 1,000 req/s (or as asked) in all, dealt to them in turn, for each one's p50 and CPU a
// request; then for each cluster gateway alone, the Redis calls a request makes (Redis's own
// command counts: no noise).
//   bun scripts/bench/experiments/cluster-ab.ts <tree>[,<tree>...] [rounds] [funded|unlimited] [req/s in all]
// A tree is a checkout's root ('.' for this one); each needs node_modules beside its src.
import { resolve } from 'node:path'
import { RedisClient } from 'bun'
import { chatCall, fundedKey, probe, send } from '../call.ts'
import { openStores } from '../cluster-stores.ts'
import { paced } from '../openloop.ts'
import { PASS_MODEL } from '../paths.ts'
import { cpuSeconds } from '../proc.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream } from '../processes.ts'
import { percentile } from '../stats.ts'

const [treesArg, rounds = '3', which = 'funded', rate = '1000'] = process.argv.slice(2)
if (!treesArg) throw new Error('usage: cluster-ab.ts <tree>[,<tree>...] [rounds] [funded|unlimited] [req/s in all]')
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const ADMIN = 'bench-admin-' + crypto.randomUUID()
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
const SEQUENTIAL = 1500
/** Requests a second in all during the dealt phase. */
const RATE = Number(rate)

/** The bootstrap key, or a key funded far past what the run spends. */
async function keyOf(url: string): Promise<string> {
  if (which !== 'funded') return bootstrap
  return fundedKey(url, ADMIN, 'funded')
}

pinSelf(0)
const stores = await openStores(0)
const upstream = await spawnUpstream(0)
const redis = new RedisClient(stores.env.SWITCHYARD_REDIS_URL!)

/** Script calls Redis has run so far, and the µs it spent in them. */
async function scriptCalls(): Promise<{ calls: number; usec: number }> {
  const info = String(await redis.send('INFO', ['commandstats']))
  let calls = 0
  let usec = 0
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(m[1])
    usec += Number(m[2])
  }
  return { calls, usec }
}

interface Running {
  name: string
  gw: Awaited<ReturnType<typeof spawnGateway>>
  call: ReturnType<typeof chatCall>
  lat: number[]
  open: number[]
}

try {
  for (let round = 1; round <= Number(rounds); round++) {
    // every tree's gateway in both setups at once, all on core 1, asked in turn one request at
    // a time: each sample of one has its neighbours of the others under the same conditions
    const running: Running[] = []
    try {
      for (const root of trees) {
        for (const setup of ['embedded', 'cluster'] as const) {
          const gw = await spawnGateway({ core: 1, upstream: upstream.url, key: bootstrap, root, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, ...(setup === 'cluster' ? stores.env : {}) } })
          running.push({ name: `${root === ROOT ? 'this tree' : root} ${setup}`, gw, call: chatCall('chat', `${gw.url}/api/alpha/v1`, await keyOf(gw.url), PASS_MODEL), lat: [], open: [] })
        }
      }
      for (const r of running) {
        await probe(r.call)
        for (let i = 0; i < 300; i++) await (await send(r.call)).text()
      }
      for (let i = 0; i < SEQUENTIAL; i++) {
        for (const r of running) {
          const t = performance.now()
          await (await send(r.call)).text()
          r.lat.push(performance.now() - t)
        }
      }
      // 1,000 req/s in all, dealt to the gateways in turn: each gets its share under the same
      // conditions, and its CPU a request and p50 compare with its neighbours'
      const cpu0 = running.map((r) => cpuSeconds(r.gw.pid))
      let dealt = 0
      await paced(RATE, 10_000, async (sentAt) => {
        const r = running[dealt++ % running.length]!
        const res = await send(r.call)
        await res.text()
        if (res.status === 200) r.open.push(performance.now() - sentAt)
      })
      const cpu = running.map((r, i) => (cpuSeconds(r.gw.pid) - cpu0[i]!) / Math.max(1, r.open.length))
      for (const [i, r] of running.entries()) {
        let calls = ''
        if (r.name.endsWith('cluster')) {
          await Bun.sleep(50) // what waits for an admission goes by itself
          const c0 = await scriptCalls()
          for (let j = 0; j < 500; j++) await (await send(r.call)).text()
          await Bun.sleep(50)
          const c1 = await scriptCalls()
          calls = ` ${((c1.calls - c0.calls) / 500).toFixed(2)} Redis script calls a request (${((c1.usec - c0.usec) / 500).toFixed(1)} µs of Redis);`
        }
        r.lat.sort((a, b) => a - b)
        r.open.sort((a, b) => a - b)
        console.log(
          `round ${round} ${r.name} ${which}: one at a time p50 ${percentile(r.lat, 50).toFixed(3)} ms, p90 ${percentile(r.lat, 90).toFixed(3)} ms;${calls}` +
            ` at ${Math.round(RATE / running.length)} req/s each (dealt in turn) p50 ${percentile(r.open, 50).toFixed(2)} ms, ${(cpu[i]! * 1e6).toFixed(0)} µs CPU a request`,
        )
      }
    } finally {
      for (const r of running) await r.gw.stop()
    }
  }
} finally {
  redis.close()
  await upstream.stop()
  await stores.close()
}
