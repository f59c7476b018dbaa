// The long-stream phase's figures (long-streams.ts): saved to long-streams-results.json and
// rendered into the Long streams section of docs/bench.md (which run.ts keeps), between markers
// of their own, so the account written around them by hand stays.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { machine } from './proc.ts'
import { ROOT } from './processes.ts'
import type { Summary } from './stats.ts'
import { LONG_STREAMS, replaceSection, sectionOf, type Markers } from './sections.ts'

export interface LongStreamRun {
  target: 'gateway' | 'bare' | 'direct'
  /** The path (paths.ts); a direct run is named by the pass-through path of its wire, a bare run by its surface's. */
  path: string
  surface: string
  n: number
  ok: number
  errors: Record<string, number>
  /** Connect → first response byte, ms. */
  ttfb: Summary
  /** The plateau (every stream open) the CPU and chunks were read over. */
  windowS: number
  openAtWindowEnd: number
  chunks: number
  /** The target's CPU seconds over the window (NaN for direct runs). */
  cpuS: number
  usPerChunk: number
  idleRssMiB: number
  /** RSS at the plateau (median of one sample a second). */
  openRssMiB: number
  kibPerStream: number
  /** Busy share of the load core (upstream and client) over the window, and the client's own share. */
  loadCore: number
  clientCores: number
}

export interface LongStreamBench {
  date: string
  machine: ReturnType<typeof machine>
  setup: { chunks: number; gapMs: number; loadAvg: string; loadAvgAfter: string; targetCore: number; loadCore: number }
  runs: LongStreamRun[]
}

export const RESULTS = join(import.meta.dir, 'long-streams-results.json')
const DOC = join(ROOT, 'docs', 'bench.md')

/** The targets: memory per open stream ≤ 32 KiB; pass-through CPU per chunk ≤ 1.4× the bare proxy's. */
export const TARGET_KIB = 32
export const TARGET_CPU_RATIO = 1.4
/**
 * A load core this busy cannot send and read every chunk on time: chunks come late and several
 * share a wake-up of the target, so its CPU a chunk falls and the ratio says little.
 */
const LOAD_BOUND = 0.9

/** The wire each path's upstream speaks (its direct run), and the surface its client speaks (its bare run). */
const WIRE: Record<string, string> = { 'pass-through': 'chat', translated: 'messages', 'messages pass-through': 'messages', 'messages translated': 'chat', 'responses pass-through': 'responses', 'responses translated': 'messages' }
const PASS_OF: Record<string, string> = { chat: 'pass-through', messages: 'messages pass-through', responses: 'responses pass-through' }

const f = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '—')
const signed = (v: number, d = 1) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(d)}` : '—')
const errs = (r: LongStreamRun) => {
  const e = Object.entries(r.errors)
  return e.length ? e.map(([k, v]) => `${v} ${k}`).join(', ') : '0'
}

/** One N's table: each gateway path beside the bare proxy on its surface, first byte over direct. */
function table(runs: LongStreamRun[], n: number): string[] {
  const at = runs.filter((r) => r.n === n)
  const direct = (wire: string) => at.find((r) => r.target === 'direct' && r.surface === wire)
  const bare = (surface: string) => at.find((r) => r.target === 'bare' && r.path === PASS_OF[surface])
  const out = [
    `### ${n.toLocaleString('en-US')} concurrent streams`,
    '',
    '| path | through | first byte p50 / p99 added over direct (ms) | CPU per relayed chunk (µs) | × bare | chunks a stream a second | memory per open stream (KiB) | streams ok | errors | load core busy |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ]
  let loadBound = false
  for (const r of at.filter((x) => x.target !== 'direct')) {
    const d = direct(r.target === 'bare' ? r.surface : WIRE[r.path]!)
    const b = bare(r.surface)
    const ratio = r.target === 'gateway' && b ? r.usPerChunk / b.usPerChunk : NaN
    const pass = r.target === 'gateway' && r.path.includes('pass-through')
    const bound = r.loadCore >= LOAD_BOUND || (b !== undefined && b.loadCore >= LOAD_BOUND)
    loadBound ||= bound
    const cpuMark = pass && Number.isFinite(ratio) ? (bound ? ' ⚠' : ratio <= TARGET_CPU_RATIO ? ' ✓' : ' ✗') : ''
    const memMark = r.target === 'gateway' ? (r.kibPerStream <= TARGET_KIB ? ' ✓' : ' ✗') : ''
    const rate = r.windowS > 0 && r.openAtWindowEnd > 0 ? r.chunks / r.windowS / r.openAtWindowEnd : NaN
    out.push(
      `| ${r.target === 'bare' ? `${r.surface} (bare proxy)` : r.path} | ${r.target === 'bare' ? 'bare proxy' : 'gateway'} | ${d ? `${signed(r.ttfb.p50 - d.ttfb.p50)} / ${signed(r.ttfb.p99 - d.ttfb.p99)}` : '—'} | ${f(r.usPerChunk)} | ${Number.isFinite(ratio) ? f(ratio, 2) + cpuMark : '—'} | ${f(rate)} | ${f(r.kibPerStream)}${memMark} | ${r.ok} / ${r.n} | ${errs(r)} | ${f(r.loadCore * 100, 0)}% |`,
    )
  }
  if (loadBound)
    out.push(
      '',
      `⚠ The load core was ${LOAD_BOUND * 100} % busy or more in this run or its bare proxy's: the upstream and the client could not keep every stream at its pace, so chunks came late and several shared each wake-up of the target (see chunks a stream a second), and the CPU ratio says little.`,
    )
  out.push('', `Direct to the upstream: ${at.filter((r) => r.target === 'direct').map((r) => `${r.surface} first byte p50 ${f(r.ttfb.p50, 2)} ms, p99 ${f(r.ttfb.p99, 2)} ms`).join('; ')}.`, '')
  return out
}

const FIGURES: Markers = { start: '<!-- long-streams-figures:start (scripts/bench/long-streams.ts writes this part) -->', end: '<!-- long-streams-figures:end -->' }

export function longStreamsMarkdown(b: LongStreamBench): string {
  const counts = [...new Set(b.runs.map((r) => r.n))]
  const secs = (b.setup.chunks * b.setup.gapMs) / 1000
  return [
    FIGURES.start,
    `${b.date.slice(0, 10)}; ${b.machine.cpuModel}, ${b.machine.nproc} cores, ${b.machine.kernel}, Bun ${b.machine.bun}. Load average ${b.setup.loadAvg.split(' ').slice(0, 3).join(' ')} at the start, ${b.setup.loadAvgAfter.split(' ').slice(0, 3).join(' ')} at the end (the machine is shared: other work ran beside).`,
    '',
    `N concurrent streams of ${secs} s at ${1000 / b.setup.gapMs} chunks a second (${b.setup.chunks} chunks each), opened over a ramp of N ms (at least 1 s). Each target is a fresh process on core ${b.setup.targetCore} with \`BUN_CONFIG_MAX_HTTP_REQUESTS\` above N; the fake upstream (one shared ticker, \`UPSTREAM_STREAM_CHUNKS\`) and the client (raw HTTP/1.1 on Bun's TCP sockets, scripts/bench/lean-client.ts) share core ${b.setup.loadCore}. First byte: connect → first response byte, added over the same streams sent straight to the upstream wire the path calls. CPU per relayed chunk: the target's CPU time over the plateau (every stream open) ÷ the chunks the clients received meanwhile. Memory per open stream: (RSS at the plateau − RSS idle after a warm-up) ÷ N. Targets: ≤ ${TARGET_KIB} KiB per open stream on every path; CPU per chunk ≤ ${TARGET_CPU_RATIO}× the bare proxy's on the pass-through paths (translated shown beside). \`bun scripts/bench/long-streams.ts 1000,5000\` runs this phase alone.`,
    '',
    ...counts.flatMap((n) => table(b.runs, n)),
    FIGURES.end,
  ].join('\n')
}

export function writeLongStreams(b: LongStreamBench) {
  writeFileSync(RESULTS, JSON.stringify(b, (_, v) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2) + '\n')
  const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : ''
  const figures = longStreamsMarkdown(b)
  const section = sectionOf(doc, LONG_STREAMS)
  let out: string
  if (section === undefined) out = replaceSection(doc, LONG_STREAMS, [LONG_STREAMS.start, '## Long streams', '', figures, LONG_STREAMS.end].join('\n'))
  else if (sectionOf(section, FIGURES) !== undefined) out = replaceSection(doc, FIGURES, figures)
  // a section written by hand without the figures' markers: the figures go at its end
  else out = replaceSection(doc, LONG_STREAMS, section.slice(0, -LONG_STREAMS.end.length) + figures + '\n' + LONG_STREAMS.end)
  writeFileSync(DOC, out)
}
