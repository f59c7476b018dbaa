// Experiment (docs/bench.md, per-request CPU): gateway trees in alternating rounds of a closed
// loop (64 connections) on one surface's pass-through, the gateway pinned to core 1, with
// its CPU a request split by thread. The split is what found a token worker still loading its
// tables at nice 10 under load: its CPU looked like a cost of every request.
//   bun scripts/bench/experiments/cpu-ab.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]
// A tree is a checkout's root ('.' for this one); each needs node_modules beside its src. A tree
// may carry runtime settings after a '+': '.+BUN_JSC_useGenerationalGC=0' (space-separated pairs).
import { resolve } from 'node:path'
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { surfaceCall, type Surface } from '../paths.ts'
import { threadCpuByName } from '../proc.ts'
import { pinSelf, ROOT, settingsEnv, spawnGateway, spawnUpstream } from '../processes.ts'

const [treesArg, which = 'chat', secs = '8', rounds = '3'] = process.argv.slice(2)
if (!treesArg) throw new Error('usage: cpu-ab.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]')
const trees = treesArg.split(',').map((spec) => {
  const [t = '.', settings = ''] = spec.split('+')
  const env = settingsEnv(settings)
  return { root: t === '.' ? ROOT : resolve(t), env, name: (t === '.' ? 'this tree' : t) + (settings ? ` ${settings}` : '') }
})
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const upstream = await spawnUpstream(0)

for (let round = 1; round <= Number(rounds); round++) {
  for (const { root, env, name } of trees) {
    const gw = await spawnGateway({ core: 1, upstream: upstream.url, key, root, env })
    const call = surfaceCall(which as Surface, gw.url, key)
    await probe(call)
    // warm: the JIT (spawnGateway has waited for the start-up work: the token tables)
    await closedLoop(call, { connections: 16, durationS: 4, core: 0 })
    const t0 = threadCpuByName(gw.pid)
    const r = await closedLoop(call, { connections: 64, durationS: Number(secs), core: 0 })
    const t1 = threadCpuByName(gw.pid)
    const n = Math.max(1, r.requests)
    const split = Object.entries(t1).map(([name, v]) => [name, v - (t0[name] ?? 0)] as const)
    const total = split.reduce((a, [, v]) => a + v, 0)
    const threads = split
      .filter(([, v]) => (v * 1e6) / n >= 1)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${((v * 1e6) / n).toFixed(0)}`)
    console.log(`round ${round} ${name} ${which}: ${Math.round(r.rps)} req/s, ${((total * 1e6) / n).toFixed(0)} µs a request (${threads.join(', ')})`)
    await gw.stop()
  }
}
await upstream.stop()
