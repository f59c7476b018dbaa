// Experiment (docs/bench.md): what the gateway's request thread allocates a request, read from
// its collector's own log (JSC's `logGC`: each collection's heap size before and after), over a
// closed loop on a surface's pass-through; trees in alternating rounds. Bytes allocated a
// request do not move with the machine's speed, as CPU time does, so trees compare on a noisy
// VM; the collections' own time a request is printed beside.
//   bun scripts/bench/experiments/allocations.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]
// KEEP_GC_LOG=1 keeps each gateway's log and prints where it is.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { surfaceCall, type Surface } from '../paths.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream } from '../processes.ts'

const [treesArg, which = 'chat', secs = '10', rounds = '3'] = process.argv.slice(2)
if (!treesArg) throw new Error('usage: allocations.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]')
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const upstream = await spawnUpstream(0)

interface Collection {
  heap: string
  /** The heap's size as the collection began, and as it ended (KiB). */
  beforeKb: number
  afterKb: number
  ms: number
}

const START = /^\[GC<(0x[0-9a-f]+)>: START \S+ (\d+)kb => /
const END = /^\[GC<(0x[0-9a-f]+)>: .*=> (\d+)kb, p=[\d.]+ms \(max [\d.]+\), cycle ([\d.]+)ms END\]/

/**
 * The collections in a `logGC` log. A collection's first line (`START`) gives the heap's size
 * then; its last (`… => <after>kb, … cycle <ms>ms END]`, after any progress lines) the size it
 * left and its time. Several heaps (the workers') write to the same log.
 */
function collections(log: string): Collection[] {
  const out: Collection[] = []
  const open = new Map<string, Collection>()
  for (const line of log.split('\n')) {
    const s = START.exec(line)
    if (s) {
      const c: Collection = { heap: s[1]!, beforeKb: Number(s[2]), afterKb: NaN, ms: 0 }
      out.push(c)
      open.set(c.heap, c)
    }
    const e = END.exec(line)
    if (e && open.has(e[1]!)) {
      const c = open.get(e[1]!)!
      c.afterKb = Number(e[2])
      c.ms = Number(e[3])
      open.delete(e[1]!)
    }
  }
  return out.filter((c) => !Number.isNaN(c.afterKb))
}

/**
 * What the busiest heap (the request thread's) allocated between its first and last collection
 * in a window: each collection's size as it began, less what the one before it left. (JSC's own
 * count of bytes allocated, where it logs one, agrees within half a percent; objects too large
 * for its blocks are not in these sizes.) Also the intervals that spans and the collections' time.
 */
function allocated(window: Collection[]): { kb: number; spans: number; count: number; ms: number } {
  const counts = new Map<string, number>()
  for (const c of window) counts.set(c.heap, (counts.get(c.heap) ?? 0) + 1)
  const heap = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0]
  const own = window.filter((c) => c.heap === heap)
  let kb = 0
  let ms = 0
  for (let i = 1; i < own.length; i++) {
    kb += own[i]!.beforeKb - own[i - 1]!.afterKb
    ms += own[i]!.ms
  }
  return { kb, spans: Math.max(0, own.length - 1), count: own.length, ms }
}

for (let round = 1; round <= Number(rounds); round++) {
  for (const root of trees) {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-gclog-'))
    const log = join(dir, 'stderr.log')
    const gw = await spawnGateway({ core: 1, upstream: upstream.url, key, root, env: { BUN_JSC_logGC: '1' }, stderrTo: log })
    try {
      const call = surfaceCall(which as Surface, gw.url, key)
      await probe(call)
      await closedLoop(call, { connections: 16, durationS: 4, core: 0 })
      const from = statSync(log).size
      const r = await closedLoop(call, { connections: 16, durationS: Number(secs), core: 0 })
      const text = readFileSync(log).subarray(from).toString()
      // the requests between the first and last collection of the window, by their share of it:
      // the collections come evenly under a steady load
      const all = collections(text)
      const a = allocated(all)
      const perSpan = a.spans > 0 ? r.requests / a.count : 0
      const requests = perSpan * a.spans
      const label = root === ROOT ? 'this tree' : root
      if (requests === 0) console.log(`round ${round} ${label} ${which}: too few collections (${all.length}) in ${secs} s`)
      else console.log(`round ${round} ${label} ${which}: ${r.requests} requests, ${a.count} collections, ${(a.kb / requests).toFixed(2)} KiB allocated a request, ${((a.ms * 1000) / requests).toFixed(1)} µs of collection a request`)
    } finally {
      await gw.stop()
      if (!process.env.KEEP_GC_LOG) rmSync(dir, { recursive: true, force: true })
      else console.log(`log: ${log}`)
    }
  }
}
await upstream.stop()
