// Experiment (docs/bench.md): a streamed request's first byte, split at the fake
// upstream's stamp on its first chunk: send → upstream sends the first chunk
// (the way in: client, proxy, upstream request) and → the client reads it (the way out).
// The gateway against the bare proxy, in alternating rounds, at 100 streams/s; p50s in ms.
// The two halves are differences of clocks in three processes, so only the gaps between
// gateway and bare proxy mean anything, not the halves themselves.
//   bun scripts/bench/experiments/first-byte.ts [chat|messages|responses] [rounds]
import { probe, send, type Call } from '../call.ts'
import { paced } from '../openloop.ts'
import { surfaceCall, type Surface } from '../paths.ts'
import { pinSelf, spawnBareProxy, spawnGateway, spawnUpstream, type Child } from '../processes.ts'
import { percentile } from '../stats.ts'
import { distinctStampsIn, epochMs } from '../wire.ts'

const [which = 'chat', rounds = '3'] = process.argv.slice(2)
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const up = await spawnUpstream(0)
const procs: [string, Child][] = [
  ['gateway', await spawnGateway({ core: 1, upstream: up.url, key })],
  ['bare   ', await spawnBareProxy(1, up.url)],
]
/** Way in and way out of one stream's first chunk, ms. */
async function split(call: Call, sentAt: number): Promise<[number, number] | undefined> {
  const res = await send(call, AbortSignal.timeout(15_000))
  const reader = res.body!.getReader()
  const dec = new TextDecoder()
  let text = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return undefined
      const now = epochMs()
      text += dec.decode(value, { stream: true })
      const first = distinctStampsIn(text)[0]
      if (first !== undefined) return [first - (performance.timeOrigin + sentAt), now - first]
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

const sums: Record<string, { way: string[]; p50s: number[][] }> = {}
for (let r = 0; r < Number(rounds); r++)
  for (const [label, p] of procs) {
    const call = surfaceCall(which as Surface, p.url, key, true)
    await probe(call)
    await paced(100, 1000, (t) => split(call, t).then(() => {}))
    const got: [number, number][] = []
    await paced(100, 3000, (t) => split(call, t).then((x) => void (x && got.push(x))))
    const s = (sums[label] ??= { way: [], p50s: [] })
    const p50 = [percentile(got.map((g) => g[0]).sort((a, b) => a - b), 50), percentile(got.map((g) => g[1]).sort((a, b) => a - b), 50)]
    s.p50s.push(p50)
    s.way.push(`in ${p50[0]!.toFixed(3)} out ${p50[1]!.toFixed(3)}`)
  }
for (const [label, s] of Object.entries(sums)) console.log(`${which} ${label}: ${s.way.join(' | ')}`)
const mean = (l: string, i: number) => sums[l]!.p50s.reduce((a, p) => a + p[i]!, 0) / sums[l]!.p50s.length
console.log(`${which}: the gateway adds ${(mean('gateway', 0) - mean('bare   ', 0)).toFixed(3)} ms on the way in, ${(mean('gateway', 1) - mean('bare   ', 1)).toFixed(3)} ms on the way out (means of the rounds' p50s)`)
for (const [, p] of procs) await p.stop()
await up.stop()
process.exit(0)
