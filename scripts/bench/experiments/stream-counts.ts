// Experiment (docs/bench.md, long streams): what a relayed chunk allocates on the gateway's
// request thread, by kind of object, N long streams of a path held open. As object-counts.ts:
// the collector off (BUN_JSC_useGC=0) and counts-preload.ts, two counts over the plateau
// divided by the chunks the clients read between them; trees in alternating rounds.
//   bun scripts/bench/experiments/stream-counts.ts <tree>[,<tree>...] [path] [N] [rounds]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { rawRequest } from '../lean-client.ts'
import { candidatePaths } from '../paths.ts'
import { ROOT, spawnGateway } from '../processes.ts'
import { longStreamRig } from './held-streams.ts'

const [treesArg = '.', path = 'pass-through', nArg = '200', rounds = '1'] = process.argv.slice(2)
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const n = Number(nArg)
const preload = join(import.meta.dir, 'counts-preload.ts')
const { up, key, limit, client } = await longStreamRig(n)

async function counts(pid: number, file: string): Promise<Record<string, number>> {
  rmSync(file, { force: true })
  process.kill(pid, 'SIGUSR2')
  for (let i = 0; i < 100; i++) {
    await Bun.sleep(20)
    try {
      return JSON.parse(readFileSync(file, 'utf8'))
    } catch {}
  }
  throw new Error('the gateway wrote no counts')
}

const table = new Map<string, Map<string, number[]>>()
for (let round = 1; round <= Number(rounds); round++)
  for (const root of trees) {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-stream-counts-'))
    const file = join(dir, 'counts.json')
    const gw = await spawnGateway({ core: 1, upstream: up.url, key, root, env: { ...limit, BUN_JSC_useGC: '0', BUN_OPTIONS: `--preload ${preload}`, COUNTS_TO: file } })
    try {
      const call = candidatePaths(gw.url, up.url, key, gw.url).find((x) => x.name === path)!.stream!.gateway
      const req = rawRequest(call)
      await Promise.all(Array.from({ length: 20 }, () => client.stream(call, req, '', 1000)))
      const all = Array.from({ length: n }, () => client.stream(call, req, '', 60_000))
      await Bun.sleep(2000)
      const k0 = client.chunks
      const before = await counts(gw.pid, file)
      await Bun.sleep(3000)
      const after = await counts(gw.pid, file)
      const chunks = client.chunks - k0
      const label = root === ROOT ? 'this tree' : root
      const per = table.get(label) ?? new Map<string, number[]>()
      table.set(label, per)
      for (const kind of new Set([...Object.keys(before), ...Object.keys(after)])) per.set(kind, [...(per.get(kind) ?? []), ((after[kind] ?? 0) - (before[kind] ?? 0)) / chunks])
      console.log(`round ${round} ${label} ${path}: ${chunks} chunks`)
      await Promise.all(all)
    } finally {
      await gw.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
await up.stop()

const labels = [...table.keys()]
const mean = (xs: number[] | undefined) => (xs && xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0)
const kinds = new Set(labels.flatMap((l) => [...table.get(l)!.keys()]))
const rows = [...kinds].map((k) => ({ k, v: labels.map((l) => mean(table.get(l)!.get(k))) })).filter((r) => r.v.some((x) => Math.abs(x) >= 0.05))
rows.sort((a, b) => Math.max(...b.v) - Math.max(...a.v))
console.log(['kind', ...labels].join('\t'))
for (const r of rows) console.log([r.k, ...r.v.map((x) => x.toFixed(2))].join('\t'))
console.log(['total', ...labels.map((_, i) => rows.reduce((s, r) => s + r.v[i]!, 0).toFixed(1))].join('\t'))
process.exit(0)
