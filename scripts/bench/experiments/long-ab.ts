// Experiment (docs/bench.md, long streams): two gateway trees and the bare proxy in alternating
// rounds on the same long streams, so a before/after comparison sees the same machine. Per
// round and target: N pass-through streams of 10 s at 20 chunks a second, CPU per relayed
// chunk over 4 s of the plateau and memory per open stream.
//   bun scripts/bench/experiments/long-ab.ts <before-tree> [N] [rounds] [paths]
import { candidatePaths } from '../paths.ts'
import { ROOT, spawnBareProxy, spawnGateway, type Child } from '../processes.ts'
import { heldStreams, jsThread, longStreamRig } from './held-streams.ts'

const [before, nArg = '1000', roundsArg = '2', pathsArg = 'pass-through,messages pass-through,responses pass-through'] = process.argv.slice(2)
if (!before) throw new Error('usage: long-ab.ts <before-tree> [N] [rounds] [paths]')
const n = Number(nArg)
const { up, key, limit, client } = await longStreamRig(n)
const targets: [string, () => Promise<Child>][] = [
  ['bare', () => spawnBareProxy(1, up.url, limit)],
  ['before', () => spawnGateway({ core: 1, upstream: up.url, key, env: limit, root: before })],
  ['after', () => spawnGateway({ core: 1, upstream: up.url, key, env: limit, root: ROOT })],
]
for (let round = 1; round <= Number(roundsArg); round++)
  for (const path of pathsArg.split(','))
    for (const [name, start] of targets) {
      const t = await start()
      const p = candidatePaths(t.url, up.url, key, t.url).find((x) => x.name === path)!
      const call = name === 'bare' ? p.reference!.stream : p.stream!.gateway
      const h = await heldStreams(client, call, t.pid, n)
      console.log(`round ${round} ${path.padEnd(22)} ${name.padEnd(6)} ${h.usPerChunk.toFixed(1).padStart(5)} µs/chunk ${h.kibPerStream.toFixed(1).padStart(6)} KiB/stream ${h.chunksPerStreamS.toFixed(1).padStart(5)} chunks/stream/s, first byte p50 ${h.firstByteP50.toFixed(1)} p99 ${h.firstByteP99.toFixed(1)} ms; JS thread ${jsThread(h).toFixed(1)} µs/chunk`)
      await t.stop()
    }
await up.stop()
process.exit(0)
