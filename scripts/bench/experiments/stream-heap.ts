// Experiment (docs/bench.md, long streams): where a gateway's memory per open stream goes.
// The gateway runs in this process (on core 1) so `bun:jsc` heapStats can be read idle and with
// N streams open; the fake upstream (long mode) and a client holding the streams run on core 0
// in processes of their own, so their objects stay out of these counts. Prints heap size, extra
// memory and RSS per stream, and the object types whose counts grew, per stream.
//   [HEAP_SOCKETS=1] [HEAP_WAIT_MS=ms] bun scripts/bench/experiments/stream-heap.ts [chat|messages|responses] [pass|translated] [N]
// (HEAP_WAIT_MS: how long the streams run before the second snapshot; default 2 ms a stream + 6 s, at least 8 s)
import { heapStats } from 'bun:jsc'
import { LeanClient, rawRequest } from '../lean-client.ts'
import { candidatePaths } from '../paths.ts'
import { pinSelf, spawnUpstream } from '../processes.ts'
import { startGateway } from '../../../test/helpers/server.ts'

if (process.env.HEAP_CLIENT) {
  // the client: opens N streams of the call it is given, says when they are all open, holds them
  pinSelf(0)
  const call = JSON.parse(process.env.HEAP_CLIENT)
  const n = Number(process.env.HEAP_N)
  const client = new LeanClient()
  const req = rawRequest(call)
  for (let i = 0; i < n; i++) {
    void client.stream(call, req, "", 120_000)
    if (i % 200 === 199) await Bun.sleep(100)
  }
  for (;;) {
    await Bun.sleep(2000)
    console.error(`client: open ${client.open} chunks ${client.chunks}`)
  }
  process.exit(0)
}

const [surface = 'chat', mode = 'pass', nArg = '1000'] = process.argv.slice(2)
const n = Number(nArg)
const PATH: Record<string, string> = { 'chat pass': 'pass-through', 'chat translated': 'translated', 'messages pass': 'messages pass-through', 'messages translated': 'messages translated', 'responses pass': 'responses pass-through', 'responses translated': 'responses translated' }
pinSelf(1)
// HEAP_SOCKETS=1: the gateway's upstream calls go over socket-fetch.ts instead of fetch
if (process.env.HEAP_SOCKETS) await import('./socket-preload.ts')
// HEAP_PUSH=1 (with PUSH_RELAY=1 and push-relay.patch applied): over socketPush, relayed from its reads
if (process.env.HEAP_PUSH) await import('./push-preload.ts')
const up = await spawnUpstream(0, { UPSTREAM_STREAM_CHUNKS: '1200', UPSTREAM_STREAM_GAP_MS: '50' })
const gw = await startGateway({ env: { OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url + '/v1', ANTHROPIC_API_KEY: 'sk-ant-up', ANTHROPIC_BASE_URL: up.url, SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '100000', SWITCHYARD_IP_RPM: '1000000' }, logLevel: 'info' })
const call = candidatePaths(gw.url, up.url, gw.key, gw.url).find((p) => p.name === PATH[`${surface} ${mode}`])!.stream!.gateway

/** Bytes and cells of each class in a heap snapshot (JSC's Inspector format: id, size, class, flags a node). */
function bySize(): Map<string, { bytes: number; count: number }> {
  const h = Bun.generateHeapSnapshot() as unknown as { nodes: number[]; nodeClassNames: string[] }
  const out = new Map<string, { bytes: number; count: number }>()
  for (let i = 0; i < h.nodes.length; i += 4) {
    const k = h.nodeClassNames[h.nodes[i + 2]!]!
    const e = out.get(k) ?? { bytes: 0, count: 0 }
    e.bytes += h.nodes[i + 1]!
    e.count++
    out.set(k, e)
  }
  return out
}

const rss = () => process.memoryUsage().rss / 1024
const snap = () => {
  // RSS as a bench reads it (whatever garbage has not been collected yet), then after a full collection
  const before = rss()
  Bun.gc(true)
  const h = heapStats()
  return { heap: h.heapSize / 1024, extra: h.extraMemorySize / 1024, objects: h.objectCount, types: { ...h.objectTypeCounts } as Record<string, number>, rssBefore: before, rss: rss(), sizes: bySize() }
}
const hold = (count: number) => {
  const p = Bun.spawn([process.execPath, import.meta.path], { env: { ...process.env, HEAP_CLIENT: JSON.stringify(call), HEAP_N: String(count) }, stdout: 'ignore', stderr: 'inherit' })
  return p
}
// warm-up: a few hundred streams opened and dropped
const w = hold(200)
await Bun.sleep(4000)
w.kill()
await Bun.sleep(2000)
const idle = snap()
const c = hold(n)
await Bun.sleep(Number(process.env.HEAP_WAIT_MS ?? Math.max(8000, n * 2 + 6000)))
const open = snap()
const per = (a: number, b: number) => ((b - a) / n).toFixed(2)
console.log(`${surface} ${mode} × ${n}: per stream heap ${per(idle.heap, open.heap)} KiB, extra ${per(idle.extra, open.extra)} KiB, RSS ${per(idle.rss, open.rss)} KiB (${per(idle.rssBefore, open.rssBefore)} before the collection), objects ${per(idle.objects, open.objects)}`)
const grew = [...open.sizes]
  .map(([k, v]) => [k, (v.bytes - (idle.sizes.get(k)?.bytes ?? 0)) / n, (v.count - (idle.sizes.get(k)?.count ?? 0)) / n] as const)
  .filter(([, b, c]) => b >= 32 || c >= 0.5)
  .sort((a, b) => b[1] - a[1])
console.log('  bytes/stream  cells/stream  class')
for (const [k, b, c] of grew) console.log(`  ${b.toFixed(0).padStart(12)}  ${c.toFixed(2).padStart(12)}  ${k}`)
for (const k of (process.env.HEAP_CLASSES ?? '').split(',').filter(Boolean)) console.log(`  ${k}: idle ${JSON.stringify(idle.sizes.get(k))}, open ${JSON.stringify(open.sizes.get(k))}`)
if (process.env.HEAP_SNAPSHOT) await Bun.write(process.env.HEAP_SNAPSHOT, JSON.stringify(Bun.generateHeapSnapshot()))
c.kill()
await gw.stop()
await up.stop()
process.exit(0)
