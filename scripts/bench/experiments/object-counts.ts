// Experiment (docs/bench.md): what the gateway's request thread allocates a request, by kind of
// object (Object, Promise, Function, Map, string…), on a surface's pass-through. Each gateway
// runs with JSC's collector off (BUN_JSC_useGC=0) and counts-preload.ts, which writes its
// heap's objects by type on a signal: two counts around a closed loop differ by what the loop
// allocated, since nothing is collected. It names the kinds that allocations.ts's bytes are
// made of, and how trees differ in them; trees in alternating rounds.
//   bun scripts/bench/experiments/object-counts.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { surfaceCall, type Surface } from '../paths.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream } from '../processes.ts'
import { countingEnv, heapCounts, KindTable } from './heap-counts.ts'

const [treesArg, which = 'chat', secs = '5', rounds = '1'] = process.argv.slice(2)
if (!treesArg) throw new Error('usage: object-counts.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]')
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const upstream = await spawnUpstream(0)

const table = new KindTable()
for (let round = 1; round <= Number(rounds); round++) {
  for (const root of trees) {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-counts-'))
    const file = join(dir, 'counts.json')
    const gw = await spawnGateway({ core: 1, upstream: upstream.url, key, root, env: countingEnv(file) })
    try {
      const call = surfaceCall(which as Surface, gw.url, key)
      await probe(call)
      await closedLoop(call, { connections: 16, durationS: 3, core: 0 })
      const before = await heapCounts(gw.pid, file)
      const r = await closedLoop(call, { connections: 16, durationS: Number(secs), core: 0 })
      const after = await heapCounts(gw.pid, file)
      const label = root === ROOT ? 'this tree' : root
      table.add(label, before, after, r.requests)
      console.log(`round ${round} ${label} ${which}: ${r.requests} requests`)
    } finally {
      await gw.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
await upstream.stop()

table.print()
