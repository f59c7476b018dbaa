// What object-counts.ts and stream-counts.ts share: a gateway started with JSC's collector off
// and counts-preload.ts, its heap's objects by type read on a signal, and the difference of two
// such counts a unit (a request, a relayed chunk) tabled by kind, one column a tree.
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'

/** The gateway's environment for counting: nothing is collected, and the counts go to `file` on SIGUSR2. */
export function countingEnv(file: string): Record<string, string> {
  return { BUN_JSC_useGC: '0', BUN_OPTIONS: `--preload ${join(import.meta.dir, 'counts-preload.ts')}`, COUNTS_TO: file }
}

/** The live objects of the process `pid` by type (counts-preload.ts writes them to `file`). */
export async function heapCounts(pid: number, file: string): Promise<Record<string, number>> {
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

/** Objects allocated a unit, by kind, one column a tree (the mean of its rounds). */
export class KindTable {
  private readonly table = new Map<string, Map<string, number[]>>()

  add(label: string, before: Record<string, number>, after: Record<string, number>, units: number): void {
    const per = this.table.get(label) ?? new Map<string, number[]>()
    this.table.set(label, per)
    for (const kind of new Set([...Object.keys(before), ...Object.keys(after)])) per.set(kind, [...(per.get(kind) ?? []), ((after[kind] ?? 0) - (before[kind] ?? 0)) / units])
  }

  /** Kinds by their count a unit, largest first, and the total. */
  print(): void {
    const labels = [...this.table.keys()]
    const mean = (xs: number[] | undefined) => (xs && xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0)
    const kinds = new Set(labels.flatMap((l) => [...this.table.get(l)!.keys()]))
    const rows = [...kinds].map((k) => ({ k, v: labels.map((l) => mean(this.table.get(l)!.get(k))) })).filter((r) => r.v.some((x) => Math.abs(x) >= 0.05))
    rows.sort((a, b) => Math.max(...b.v) - Math.max(...a.v))
    console.log(['kind', ...labels].join('\t'))
    for (const r of rows) console.log([r.k, ...r.v.map((x) => x.toFixed(2))].join('\t'))
    console.log(['total', ...labels.map((_, i) => rows.reduce((s, r) => s + r.v[i]!, 0).toFixed(1))].join('\t'))
  }
}
