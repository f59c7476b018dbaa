// Experiment (docs/bench.md): what the gateway's request thread allocates a request, by kind of
// object (Object, Promise, Function, Map, string…), on a surface's pass-through. Each gateway
// runs with JSC's collector off (BUN_JSC_useGC=0) and counts-preload.ts, which writes its
// heap's objects by type on a signal: two counts around a closed loop differ by what the loop
// allocated, since nothing is collected. It names the kinds that allocations.ts's bytes are
// made of, and how trees differ in them; trees in alternating rounds.
//   bun scripts/bench/experiments/object-counts.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { surfaceCall, type Surface } from '../paths.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream } from '../processes.ts'

const [treesArg, which = 'chat', secs = '5', rounds = '1'] = process.argv.slice(2)
if (!treesArg) throw new Error('usage: object-counts.ts <tree>[,<tree>...] [chat|messages|responses] [seconds] [rounds]')
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
const preload = join(import.meta.dir, 'counts-preload.ts')
pinSelf(0)
const upstream = await spawnUpstream(0)

async function counts(pid: number, file: string): Promise<Record<string, number>> {
  rmSync(file, { force: true })
  process.kill(pid, 'SIGUSR2')
  for (let i = 0; i < 100; i++) {
    await Bun.sleep(50)
    try {
      return JSON.parse(readFileSync(file, 'utf8'))
    } catch {}
  }
  throw new Error('the gateway wrote no counts')
}

const table = new Map<string, Map<string, number[]>>()
for (let round = 1; round <= Number(rounds); round++) {
  for (const root of trees) {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-counts-'))
    const file = join(dir, 'counts.json')
    const env = { BUN_JSC_useGC: '0', BUN_OPTIONS: `--preload ${preload}`, COUNTS_TO: file }
    const gw = await spawnGateway({ core: 1, upstream: upstream.url, key, root, env })
    try {
      const call = surfaceCall(which as Surface, gw.url, key)
      await probe(call)
      await closedLoop(call, { connections: 16, durationS: 3, core: 0 })
      const before = await counts(gw.pid, file)
      const r = await closedLoop(call, { connections: 16, durationS: Number(secs), core: 0 })
      const after = await counts(gw.pid, file)
      const label = root === ROOT ? 'this tree' : root
      const per = table.get(label) ?? new Map<string, number[]>()
      table.set(label, per)
      for (const kind of new Set([...Object.keys(before), ...Object.keys(after)])) {
        const n = ((after[kind] ?? 0) - (before[kind] ?? 0)) / r.requests
        per.set(kind, [...(per.get(kind) ?? []), n])
      }
      console.log(`round ${round} ${label} ${which}: ${r.requests} requests`)
    } finally {
      await gw.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
await upstream.stop()

// kinds by their count a request, largest first; one column a tree (its rounds' mean)
const labels = [...table.keys()]
const mean = (xs: number[] | undefined) => (xs && xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0)
const kinds = new Set(labels.flatMap((l) => [...table.get(l)!.keys()]))
const rows = [...kinds].map((k) => ({ k, v: labels.map((l) => mean(table.get(l)!.get(k))) })).filter((r) => r.v.some((x) => Math.abs(x) >= 0.05))
rows.sort((a, b) => Math.max(...b.v) - Math.max(...a.v))
console.log(['kind', ...labels].join('\t'))
for (const r of rows) console.log([r.k, ...r.v.map((x) => x.toFixed(2))].join('\t'))
console.log(['total', ...labels.map((_, i) => rows.reduce((s, r) => s + r.v[i]!, 0).toFixed(1))].join('\t'))
