// Experiment (docs/bench.md, long streams): the same gateway tree under different runtime
// settings (BUN_JSC_* options for the collector, say) and the bare proxy, in alternating rounds
// on the same long streams. Per round and target: N pass-through streams of 10 s at 20 chunks
// a second, CPU per relayed chunk over 4 s of the plateau and memory per open stream.
//   bun scripts/bench/experiments/env-ab.ts <N> <rounds> <path> '' 'BUN_JSC_x=1 BUN_JSC_y=2' ...
// ('' is the tree as it runs by default.)
import { candidatePaths } from '../paths.ts'
import { settingsEnv, spawnBareProxy, spawnGateway, type Child } from '../processes.ts'
import { heldStreams, longStreamRig } from './held-streams.ts'

const [nArg = '1000', roundsArg = '2', path = 'pass-through', ...variants] = process.argv.slice(2)
const n = Number(nArg)
const { up, key, limit, client } = await longStreamRig(n)
const targets: [string, () => Promise<Child>][] = [
  ['bare', () => spawnBareProxy(1, up.url, limit)],
  ...(variants.length ? variants : ['']).map((v): [string, () => Promise<Child>] => [v || 'default', () => spawnGateway({ core: 1, upstream: up.url, key, env: { ...limit, ...settingsEnv(v) } })]),
]
for (let round = 1; round <= Number(roundsArg); round++)
  for (const [name, start] of targets) {
    const t = await start()
    const p = candidatePaths(t.url, up.url, key, t.url).find((x) => x.name === path)!
    const call = name === 'bare' ? p.reference!.stream : p.stream!.gateway
    const h = await heldStreams(client, call, t.pid, n)
    console.log(`round ${round} ${path} ${h.usPerChunk.toFixed(1).padStart(5)} µs/chunk ${h.kibPerStream.toFixed(1).padStart(6)} KiB/stream  ${name}`)
    await t.stop()
  }
await up.stop()
process.exit(0)
