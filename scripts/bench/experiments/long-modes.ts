// Experiment (docs/bench.md, long streams): one gateway tree started afresh again and again on
// the same long streams, to see how far one tree's CPU a relayed chunk moves from start to start,
// with each thread's share (the JS thread, the HTTP client thread, the collector's helpers).
//   bun scripts/bench/experiments/long-modes.ts [runs] [N] [path] [tree]
import { resolve } from 'node:path'
import { candidatePaths } from '../paths.ts'
import { ROOT, spawnGateway } from '../processes.ts'
import { heldStreams, longStreamRig } from './held-streams.ts'

const [runs = '6', nArg = '1000', path = 'pass-through', tree = '.'] = process.argv.slice(2)
const n = Number(nArg)
const { up, key, limit, client } = await longStreamRig(n)
for (let run = 1; run <= Number(runs); run++) {
  const gw = await spawnGateway({ core: 1, upstream: up.url, key, env: { ...limit, ...extraEnv() }, root: tree === '.' ? ROOT : resolve(tree) })
  const call = candidatePaths(gw.url, up.url, key, gw.url).find((x) => x.name === path)!.stream!.gateway
  const h = await heldStreams(client, call, gw.pid, n)
  const threads = Object.entries(h.usPerChunkByThread)
    .filter(([, v]) => v >= 0.3)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ')
  console.log(`run ${run}: ${h.usPerChunk.toFixed(1)} µs/chunk (${threads}), ${h.kibPerStream.toFixed(1)} KiB/stream, ${h.chunksPerStreamS.toFixed(1)} chunks/stream/s`)
  await gw.stop()
}
await up.stop()
process.exit(0)

/** LONG_MODES_ENV="A=1 B=2": settings for the gateway (a JSC option, say). */
function extraEnv(): Record<string, string> {
  return Object.fromEntries((process.env.LONG_MODES_ENV ?? '').split(' ').filter(Boolean).map((kv) => kv.split('=') as [string, string]))
}
