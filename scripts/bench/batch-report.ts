// The batch bench's figures and their section of docs/bench.md, kept between two markers so
// that the main bench (run.ts, which rewrites the rest of the file) leaves it as it is.
import type { Summary } from './stats.ts'

export interface BatchBench {
  date: string
  machine: { nproc: number; cpuModel: string; kernel: string; bun: string }
  setup: { items: number; interactiveRate: number; interactiveSeconds: number; pinned: boolean; loadAvg: string; notes: string[] }
  uploadMs: number
  createMs: number
  /** From the create request to the batch's end (output files written). */
  totalMs: number
  itemsPerSecond: number
  /** Gateway CPU (every thread) from the create to the end. */
  gatewayCpuS: number
  counts: { total: number; completed: number; failed: number }
  interactive: {
    before: Summary
    during: Summary
    after: Summary
    errors: { before: number; during: number; after: number }
    /** Cores' worth of CPU other processes used during each phase (noise). */
    otherLoad?: Record<string, number>
  }
  /** `peakMiB`: sampled every 50 ms; `hwmMiB`: the kernel's peak (VmHWM) over the batch, reset at its start (`hwmReset` false: the kernel refused, so it is the process's peak so far). */
  rss: { beforeMiB: number; peakMiB: number; growthMiB: number; hwmMiB?: number; hwmReset?: boolean }
  /** `hwmMiB`: VmHWM over the export, reset before it. */
  exports: { format: string; status: number; bytes: number; ms: number; rssBeforeMiB: number; rssGrowthMiB: number; hwmMiB?: number }[]
}

export const START = '<!-- batch-bench:start (scripts/bench/batch.ts writes this section) -->'
export const END = '<!-- batch-bench:end -->'

const f = (v: number, d = 2) => (Number.isFinite(v) ? v.toFixed(d) : '—')
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS')
const other = (r: BatchBench, phase: string) => {
  const v = r.interactive.otherLoad?.[phase]
  return v === undefined ? '—' : `${Math.round(v * 100)}%${v > 0.1 ? ' ⚠' : ''}`
}

export interface Target {
  figure: string
  target: string
  measured: string
  pass: boolean
}

export function batchTargets(r: BatchBench): Target[] {
  const p99Ratio = r.interactive.during.p99 / r.interactive.before.p99
  const rows: Target[] = [
    { figure: `${r.setup.items.toLocaleString('en')} items through the mock: create → ended`, target: '< 60 s', measured: `${f(r.totalMs / 1000, 1)} s`, pass: r.totalMs < 60_000 && r.counts.completed === r.setup.items },
    { figure: 'interactive chat p99 during the batch vs without it', target: '≤ +20 %', measured: `${f(r.interactive.during.p99)} ms vs ${f(r.interactive.before.p99)} ms (${p99Ratio >= 1 ? '+' : ''}${f((p99Ratio - 1) * 100, 0)} %)`, pass: p99Ratio <= 1.2 },
    { figure: 'gateway peak RSS growth while the batch runs', target: '< 200 MiB', measured: `${f(r.rss.growthMiB, 1)} MiB`, pass: r.rss.growthMiB < 200 },
  ]
  for (const e of r.exports) rows.push({ figure: `export of ${r.setup.items.toLocaleString('en')} results, ${e.format}: RSS growth while it streams`, target: '< 64 MiB', measured: `${f(e.rssGrowthMiB, 1)} MiB`, pass: e.status === 200 && e.rssGrowthMiB < 64 })
  return rows
}

export function batchSection(r: BatchBench): string {
  const s = (x: Summary) => `${f(x.p50)} / ${f(x.p90)} / ${f(x.p99)} / ${f(x.max)}`
  const lines = [
    START,
    '## Batches',
    '',
    `Produced by \`bun scripts/bench/batch.ts\`: a ${r.setup.items.toLocaleString('en')}-item JSONL batch (chat items for \`mock-gpt\`) runs through the built-in mock provider`,
    `while an open-loop interactive chat load (${r.setup.interactiveRate} req/s for ${r.setup.interactiveSeconds} s, \`gpt-4o-mini\` passed through to the fake upstream) measures what the batch`,
    'costs interactive traffic; then each export format of the results is streamed to the end while the gateway\'s RSS is sampled every 50 ms.',
    r.setup.pinned
      ? 'As in the main bench, the gateway runs on core 1 (so its pool has one item worker and the results writer) and the load driver and the fake upstream on core 0.'
      : 'The gateway was not pinned (its pool is the CPU count, plus the results writer); the load driver and the fake upstream share core 0.',
    '',
    `Machine: ${r.date.slice(0, 10)} · ${r.machine.nproc} × ${r.machine.cpuModel.split(' ').slice(0, 2).join(' ')} · ${r.machine.kernel} · Bun ${r.machine.bun} · load average at start ${r.setup.loadAvg.split(' ').slice(0, 3).join(' ')}.`,
    ...(r.setup.notes.length ? ['', ...r.setup.notes.map((n) => `- ${n}`)] : []),
    '',
    '| figure | target | measured | verdict |',
    '| --- | --- | --- | --- |',
    ...batchTargets(r).map((t) => `| ${t.figure} | ${t.target} | ${t.measured} | ${verdict(t.pass)} |`),
    '',
    `The batch: upload ${f(r.uploadMs / 1000, 1)} s (not counted), create (every line checked and stored by a worker) ${f(r.createMs / 1000, 1)} s, create → ended ${f(r.totalMs / 1000, 1)} s`,
    `(${Math.round(r.itemsPerSecond).toLocaleString('en')} items/s), ${r.counts.completed.toLocaleString('en')} completed, ${r.counts.failed} failed; gateway CPU over that time ${f(r.gatewayCpuS, 1)} s (all threads).`,
    `RSS ${f(r.rss.beforeMiB, 1)} MiB before, peak ${f(r.rss.peakMiB, 1)} MiB${r.rss.hwmMiB === undefined ? '' : `; the kernel's peak (VmHWM) over the batch ${f(r.rss.hwmMiB, 1)} MiB${r.rss.hwmReset === false ? ' (not reset: the process\'s peak so far)' : ''}`}.`,
    '',
    '| interactive chat, ms from the send | p50 / p90 / p99 / max | errors | other load |',
    '| --- | --- | --- | --- |',
    `| without a batch (before) | ${s(r.interactive.before)} | ${r.interactive.errors.before} | ${other(r, 'before')} |`,
    `| while the batch runs | ${s(r.interactive.during)} | ${r.interactive.errors.during} | ${other(r, 'during')} |`,
    `| without a batch (after) | ${s(r.interactive.after)} | ${r.interactive.errors.after} | ${other(r, 'after')} |`,
    '',
    '| export | bytes | time | RSS before | RSS growth | peak RSS (VmHWM) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...r.exports.map((e) => `| ${e.format} | ${(e.bytes / 1024 / 1024).toFixed(1)} MiB | ${f(e.ms / 1000, 1)} s | ${f(e.rssBeforeMiB, 1)} MiB | ${f(e.rssGrowthMiB, 1)} MiB | ${e.hwmMiB === undefined ? '—' : `${f(e.hwmMiB, 1)} MiB`} |`),
    END,
  ]
  return lines.join('\n')
}

/** `doc` with its batch section replaced by `section` (appended when it has none). */
export function replaceBatchSection(doc: string, section: string): string {
  const a = doc.indexOf(START)
  const b = doc.indexOf(END)
  if (a >= 0 && b > a) return doc.slice(0, a) + section + doc.slice(b + END.length)
  return doc.replace(/\s*$/, '') + '\n\n' + section + '\n'
}

/** The batch section of `doc`, if it has one (run.ts keeps it when it rewrites the rest). */
export function batchSectionOf(doc: string): string | undefined {
  const a = doc.indexOf(START)
  const b = doc.indexOf(END)
  return a >= 0 && b > a ? doc.slice(a, b + END.length) : undefined
}
