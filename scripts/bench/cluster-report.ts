// The cluster bench's figures as a table in docs/bench.md. The "Cluster mode" section sits
// between marker comments that run.ts keeps when it rewrites the file; inside it, only the
// figures part (its own markers) is rewritten by each run, so the hand-written account of
// what was tried around it stays.
import { CLUSTER, replaceSection, sectionOf, type Markers } from './sections.ts'

export interface Figures {
  /** Closed loop. */
  rps: number
  cpuUsAtSaturation: number
  /** The gateway's share of its core during the closed loop (under 0.9: the load side was the limit). */
  coreBusy: number
  /** On the load core during the closed loop: the bench's own Redis, the gateway's PostgreSQL backends. */
  redisCpuUsAtSaturation: number
  pgCpuUsAtSaturation: number
  /** Open loop at the fixed rate. */
  cpuUsAtRate: number
  p50Ms: number
  p99Ms: number
  errors: number
  otherCores: number
}

export interface ClusterBench {
  date: string
  machine: { nproc: number; cpuModel: string; kernel: string; bun: string }
  loadAvg: { before: string; after: string }
  tool: 'wrk' | 'bun'
  rounds: number
  phase: { openMs: number; closedS: number; warmS: number; warmOpenMs?: number }
  connections: number
  rate: number
  stores: string[]
  notes: string[]
  embedded: Figures
  cluster: Figures
  /** The same with a funded key (a credit reservation and its settlement a request). */
  funded?: { embedded: Figures; cluster: Figures }
  rows: { embedded: Figures[]; cluster: Figures[]; embeddedFunded?: Figures[]; clusterFunded?: Figures[] }
}

const FIGURES: Markers = { start: '<!-- cluster-figures:start (scripts/bench/cluster.ts writes this part) -->', end: '<!-- cluster-figures:end -->' }

const n0 = (v: number) => Math.round(v).toLocaleString('en-US')
const f1 = (v: number) => v.toFixed(1)
const f2 = (v: number) => v.toFixed(2)
const signed = (v: number, f: (v: number) => string) => (v >= 0 ? '+' : '−') + f(Math.abs(v))
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS')

/** The table's rows for one kind of key: cluster against embedded, with the targets' verdicts. */
function rows(b: ClusterBench, e: Figures, c: Figures, which: string): string[] {
  const ratio = c.rps / e.rps
  const cpu = c.cpuUsAtSaturation - e.cpuUsAtSaturation
  const p50 = c.p50Ms - e.p50Ms
  const rate = b.rate.toLocaleString('en-US')
  const busy = (f: Figures) => (f.coreBusy < 0.9 ? ` ⚠ core ${Math.round(f.coreBusy * 100)} % busy` : '')
  // a gateway below 90 % of its core was not what limited the closed loop (the load core was):
  // its req/s and its CPU a request (higher below saturation) say less, and the verdict says so
  const unsure = e.coreBusy < 0.9 || c.coreBusy < 0.9 ? ' ⚠' : ''
  const atRate = c.cpuUsAtRate - e.cpuUsAtRate
  return [
    `| ${which}: max req/s | ${n0(e.rps)}${busy(e)} | ${n0(c.rps)}${busy(c)} | ${Math.round(ratio * 100)} % | ≥ 85 % | ${verdict(ratio >= 0.85)}${unsure} |`,
    `| ${which}: gateway CPU a request at max req/s | ${f1(e.cpuUsAtSaturation)} µs | ${f1(c.cpuUsAtSaturation)} µs | ${signed(cpu, f1)} µs | ≤ +10 µs | ${verdict(cpu <= 10)}${unsure} |`,
    `| ${which}: gateway CPU a request at ${rate} req/s | ${f1(e.cpuUsAtRate)} µs | ${f1(c.cpuUsAtRate)} µs | ${signed(atRate, f1)} µs | ≤ +10 µs | ${verdict(atRate <= 10)} |`,
    `| ${which}: Redis / PostgreSQL backends' CPU a request at max req/s (load core) | — | ${f1(c.redisCpuUsAtSaturation)} / ${f1(c.pgCpuUsAtSaturation)} µs | — | — | — |`,
    `| ${which}: p50 at ${rate} req/s | ${f2(e.p50Ms)} ms | ${f2(c.p50Ms)} ms | ${signed(p50, f2)} ms | ≤ +0.3 ms | ${verdict(p50 <= 0.3)} |`,
    `| ${which}: p99 at ${rate} req/s | ${f2(e.p99Ms)} ms | ${f2(c.p99Ms)} ms | ${signed(c.p99Ms - e.p99Ms, f2)} ms | — | — |`,
  ]
}

export function figuresMarkdown(b: ClusterBench): string {
  const e = b.embedded
  const c = b.cluster
  const perRound = (rs: Figures[] | undefined) => (rs ?? []).map((r) => n0(r.rps)).join(', ')
  const lines = [
    `Run of ${b.date.slice(0, 16).replace('T', ' ')} UTC: ${b.machine.cpuModel}, ${b.machine.nproc} cores, Bun ${b.machine.bun}; ` +
      `load average ${b.loadAvg.before.split(' ').slice(0, 3).join(' ')} before, ${b.loadAvg.after.split(' ').slice(0, 3).join(' ')} after; ` +
      `${b.rounds} alternating round${b.rounds === 1 ? '' : 's'} (medians), open loop ${b.phase.openMs / 1000} s at ${b.rate.toLocaleString('en-US')} req/s${b.phase.warmOpenMs ? ` (after ${b.phase.warmS} s of closed loop and ${b.phase.warmOpenMs / 1000} s at that rate, unmeasured)` : ''}, closed loop ${b.phase.closedS} s at ${b.connections} connections (${b.tool}).`,
    '',
    '| figure (chat pass-through) | embedded (SQLite, limits in memory) | cluster (PostgreSQL + Redis) | cluster against embedded | target | verdict |',
    '| --- | ---: | ---: | ---: | --- | --- |',
    ...rows(b, e, c, 'unlimited key'),
    ...(b.funded ? rows(b, b.funded.embedded, b.funded.cluster, 'funded key') : []),
    '',
    `Max req/s by round: embedded ${perRound(b.rows.embedded)}; cluster ${perRound(b.rows.cluster)}` +
      (b.funded ? `; funded key, embedded ${perRound(b.rows.embeddedFunded)}; cluster ${perRound(b.rows.clusterFunded)}.` : '.'),
    `Other load on the machine during the phases: up to ${Math.round(Math.max(...Object.values(b.rows).flatMap((rs) => (rs ?? []).map((r) => r.otherCores))) * 100)} % of a core outside the bench's processes.`,
    ...(e.errors + c.errors > 0 ? [`Errors (non-2xx, socket, wrong body): embedded ${e.errors}, cluster ${c.errors} (medians).`] : []),
    `Stores: ${b.stores.join('; ')}.`,
    ...b.notes.map((n) => `Note: ${n}.`),
  ]
  return `${FIGURES.start}\n${lines.join('\n')}\n${FIGURES.end}`
}

/** `doc` with the figures of `b` in its "Cluster mode" section (the section appended when it has none). */
export function clusterSection(doc: string, b: ClusterBench): string {
  const figures = figuresMarkdown(b)
  const section = sectionOf(doc, CLUSTER)
  if (section === undefined) return replaceSection(doc, CLUSTER, `${CLUSTER.start}\n## Cluster mode\n\n${figures}\n${CLUSTER.end}`)
  const inner = sectionOf(section, FIGURES) === undefined ? section.replace(CLUSTER.end, `${figures}\n${CLUSTER.end}`) : replaceSection(section, FIGURES, figures)
  return replaceSection(doc, CLUSTER, inner)
}
