// Experiment (docs/bench.md): where a request's CPU goes by thread, the gateway
// against the bare proxy, at several closed-loop concurrencies (so at several rates). Bun's
// HTTP client thread and the request thread both cost less a request the more requests
// each wake-up serves, so the two are compared at like rates, not only at each one's peak.
//   bun scripts/bench/experiments/threads.ts [chat|messages|responses] [connections,…]
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { surfaceCall, type Surface } from '../paths.ts'
import { threadCpuByName as byName } from '../proc.ts'
import { pinSelf, spawnBareProxy, spawnGateway, spawnUpstream, type Child } from '../processes.ts'

const [which = 'chat', conns = '1,2,4,64'] = process.argv.slice(2)
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const up = await spawnUpstream(0)
const gw = await spawnGateway({ core: 1, upstream: up.url, key })
const bare = await spawnBareProxy(1, up.url)

async function run(label: string, p: Child, connections: number) {
  const call = surfaceCall(which as Surface, p.url, key)
  await probe(call)
  await closedLoop(call, { connections, durationS: 1, core: 0 })
  const t0 = byName(p.pid)
  const r = await closedLoop(call, { connections, durationS: 4, core: 0 })
  const t1 = byName(p.pid)
  const rows = Object.keys(t1)
    .map((n) => [n, ((t1[n]! - (t0[n] ?? 0)) * 1e6) / r.requests] as const)
    .filter(([, us]) => us >= 0.5)
    .sort((a, b) => b[1] - a[1])
  const total = rows.reduce((a, [, us]) => a + us, 0)
  console.log(`${label} ${String(connections).padStart(2)} conns: ${String(r.rps | 0).padStart(6)} req/s, ${total.toFixed(1)} µs/req: ${rows.map(([n, us]) => `${n} ${us.toFixed(1)}`).join(', ')}`)
}

for (const c of conns.split(',').map(Number)) {
  await run('gateway', gw, c)
  await run('bare   ', bare, c)
}
await gw.stop()
await bare.stop()
await up.stop()
process.exit(0)
