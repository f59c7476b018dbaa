// Experiment (docs/bench.md, where a chunk's CPU goes): the relay's core sampled by perf while it
// holds N long streams of a path, the bare proxy and the gateway in turn, for a report by symbol
// (`perf report -i <out>.<target> --sort dso,sym`).
//   bun scripts/bench/experiments/stream-perf.ts [path] [N] [out]
import { candidatePaths } from '../paths.ts'
import { spawnBareProxy, spawnGateway } from '../processes.ts'
import { heldStreams, jsThread, longStreamRig } from './held-streams.ts'

const [path = 'pass-through', nArg = '1000', out = '/tmp/stream-perf'] = process.argv.slice(2)
const n = Number(nArg)
const { up, key, limit, client } = await longStreamRig(n)
for (const name of ['bare', 'gateway']) {
  const t = name === 'bare' ? await spawnBareProxy(1, up.url, limit) : await spawnGateway({ core: 1, upstream: up.url, key, env: limit })
  const p = candidatePaths(t.url, up.url, key, t.url).find((x) => x.name === path)!
  const call = name === 'bare' ? p.reference!.stream : p.stream!.gateway
  // perf starts once the streams are open (heldStreams settles 2.5 s, then measures 4 s)
  const perf = Bun.sleep(3000).then(() => Bun.spawn(['perf', 'record', '-q', '-F', '4999', '-g', '-p', String(t.pid), '-o', `${out}.${name}`, '--', 'sleep', '3'], { stdout: 'ignore', stderr: 'ignore' }))
  const h = await heldStreams(client, call, t.pid, n)
  await (await perf).exited
  console.log(`${name.padEnd(8)} ${h.usPerChunk.toFixed(1)} µs/chunk (JS thread ${jsThread(h).toFixed(1)}), ${h.kibPerStream.toFixed(1)} KiB/stream, ${h.chunksPerStreamS.toFixed(1)} chunks/stream/s`)
  await t.stop()
}
await up.stop()
process.exit(0)
