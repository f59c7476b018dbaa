// Experiment (docs/bench.md, long streams): what a relayed chunk allocates on the gateway's
// request thread, by kind of object, N long streams of a path held open. As object-counts.ts:
// the collector off (BUN_JSC_useGC=0) and counts-preload.ts, two counts over the plateau
// divided by the chunks the clients read between them; trees in alternating rounds.
//   bun scripts/bench/experiments/stream-counts.ts <tree>[,<tree>...] [path] [N] [rounds]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { rawRequest } from '../lean-client.ts'
import { candidatePaths } from '../paths.ts'
import { ROOT, spawnGateway } from '../processes.ts'
import { longStreamRig } from './held-streams.ts'
import { countingEnv, heapCounts, KindTable } from './heap-counts.ts'

const [treesArg = '.', path = 'pass-through', nArg = '200', rounds = '1'] = process.argv.slice(2)
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const n = Number(nArg)
const { up, key, limit, client } = await longStreamRig(n)

const table = new KindTable()
for (let round = 1; round <= Number(rounds); round++)
  for (const root of trees) {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-stream-counts-'))
    const file = join(dir, 'counts.json')
    const gw = await spawnGateway({ core: 1, upstream: up.url, key, root, env: { ...limit, ...countingEnv(file) } })
    try {
      const call = candidatePaths(gw.url, up.url, key, gw.url).find((x) => x.name === path)!.stream!.gateway
      const req = rawRequest(call)
      await Promise.all(Array.from({ length: 20 }, () => client.stream(call, req, '', 1000)))
      const all = Array.from({ length: n }, () => client.stream(call, req, '', 60_000))
      await Bun.sleep(2000)
      const k0 = client.chunks
      const before = await heapCounts(gw.pid, file)
      await Bun.sleep(3000)
      const after = await heapCounts(gw.pid, file)
      const chunks = client.chunks - k0
      const label = root === ROOT ? 'this tree' : root
      table.add(label, before, after, chunks)
      console.log(`round ${round} ${label} ${path}: ${chunks} chunks`)
      await Promise.all(all)
    } finally {
      await gw.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
await up.stop()

table.print()
process.exit(0)
