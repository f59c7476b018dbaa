// Results → tables: one set of rows, rendered as aligned text for the terminal and as
// markdown for docs/bench.md (which the README quotes).
import type { BatchBench } from './batch-report.ts'
import type { Results } from './results.ts'
import { BUDGET } from './sections.ts'
import type { Summary } from './stats.ts'
import { earlierVerdicts } from './targets-earlier.ts'
import { verdicts } from './targets.ts'

type Table = { title: string; head: string[]; rows: string[][] }

const ms = (v: number | null | undefined, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits))
const signed = (v: number | null | undefined, digits = 2) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : (v >= 0 ? '+' : '') + v.toFixed(digits))
const int = (v: number) => Math.round(v).toLocaleString('en-US')
const trio = (s: Pick<Summary, 'p50' | 'p90' | 'p99'>, f = ms) => `${f(s.p50)} / ${f(s.p90)} / ${f(s.p99)}`
const duo = (s: Pick<Summary, 'p50' | 'p90'>, f = ms) => `${f(s.p50)} / ${f(s.p90)}`
const noise = (cores: number) => (cores > 0.1 ? `${Math.round(cores * 100)}% ⚠` : `${Math.round(cores * 100)}%`)
const ratio = (g: number, b: number | undefined) => (b === undefined || !b || !Number.isFinite(g / b) ? '—' : `${Math.round((g / b) * 100)} %`)
const diff = (g: number, b: number | undefined) => (b === undefined ? '—' : signed(g - b))
/** Alternating rounds: the median is shown, and the range of the rounds beside it. */
const spread = (rounds: number[] | undefined) => (rounds && rounds.length > 1 ? ` (${int(Math.min(...rounds))}–${int(Math.max(...rounds))})` : '')
const verdict = (pass: boolean | null, target: string) => (pass === null ? (target === '—' ? '—' : 'n/a') : pass ? 'PASS' : 'MISS')
const errs = (e: Record<string, number> | number) => {
  const n = typeof e === 'number' ? e : Object.values(e).reduce((a, b) => a + b, 0)
  return n === 0 ? '0' : `${n} ⚠`
}

/** The targets' table: the gateway against the bare proxy on the same surface, in the same run. */
export function targetTable(r: Results, batch?: BatchBench): Table {
  return {
    title: 'Targets: the gateway against the bare Elysia proxy on the same core, surface and run',
    head: ['figure', 'target', 'gateway', 'bare proxy', 'ratio / difference', 'verdict'],
    // a verdict on a figure that is not what it claims (⚠ in its row) is marked, not dropped
    rows: verdicts(r, batch).map((v) => [v.label, v.target, v.gateway, v.bare, v.ratio, verdict(v.pass, v.target) + (v.doubtful && v.pass !== null ? ' ⚠' : '')]),
  }
}

export function tables(r: Results): Table[] {
  const phases = r.memory.phases ?? []
  return [
    {
      title: 'Earlier absolute targets (chat, then the messages and responses paths), for reference',
      head: ['figure', 'target', 'measured', 'verdict'],
      rows: earlierVerdicts(r).map((v) => [
        v.label,
        v.target,
        v.measured === null ? 'not measured' : v.unit === 'ms' ? `${signed(v.measured)} ms` : `${int(v.measured)} req/s`,
        v.pass === null ? 'n/a' : v.pass ? 'PASS' : 'MISS',
      ]),
    },
    {
      title: 'Open loop: latency from the send, ms (p50 / p90 / p99)',
      head: ['path', 'rate', 'direct to upstream', 'through gateway', 'added', 'bare Elysia proxy adds', 'added − bare added (p50)', 'errors', 'gateway CPU/req', 'bare proxy CPU/req', 'gateway core busy', 'other load'],
      rows: r.openLoop.map((o) => [
        o.path,
        `${int(o.rate)}/s`,
        trio(o.baseline.latency),
        trio(o.gateway.latency),
        trio(o.added, signed),
        o.referenceAdded ? trio(o.referenceAdded, signed) : '—',
        diff(o.added.p50, o.referenceAdded?.p50),
        errs(o.gateway.errors),
        `${ms(o.cost.cpuMsPerRequest, 3)} ms`,
        o.referenceCost ? `${ms(o.referenceCost.cpuMsPerRequest, 3)} ms` : '—',
        `${Math.round(o.cost.coreBusy * 100)}%`,
        noise(o.otherCores),
      ]),
    },
    {
      title: `Closed loop: max req/s (${r.setup.closedLoopTool === 'wrk' ? 'wrk' : 'Bun driver, wrk missing'}${r.closedLoop.some((c) => c.rounds) ? '; gateway and bare proxy in alternating rounds: median (range)' : ''})`,
      head: ['path', 'connections', 'direct to upstream', 'through gateway', 'bare Elysia proxy (same surface)', 'gateway ÷ bare', 'errors', 'gateway CPU/req', 'bare proxy CPU/req', 'gateway core busy', 'bare core busy', 'other load'],
      rows: r.closedLoop.map((c) => [
        c.path,
        String(c.gateway.connections),
        int(c.baseline.rps),
        int(c.gateway.rps) + spread(c.rounds?.gateway),
        c.reference ? int(c.reference.rps) + spread(c.rounds?.reference) : '—',
        ratio(c.gateway.rps, c.reference?.rps),
        errs(c.gateway.errors),
        `${ms(c.cost.cpuMsPerRequest, 3)} ms`,
        c.referenceCost ? `${ms(c.referenceCost.cpuMsPerRequest, 3)} ms` : '—',
        `${Math.round(c.cost.coreBusy * 100)}%`,
        c.referenceCost ? `${Math.round(c.referenceCost.coreBusy * 100)}%` : '—',
        noise(c.otherCores),
      ]),
    },
    {
      title: 'Streams: first byte from the send, and each chunk from its upstream send, ms',
      head: ['path', 'rate', 'first byte direct (p50 / p90)', 'first byte gateway', 'added', 'bare proxy adds', 'added − bare added (p50)', 'chunk delay added (p50 / p90 / p99)', 'chunk spread (1 = as sent)', 'errors', 'gateway CPU/stream', 'other load'],
      rows: r.streams.map((s) => [
        s.path,
        `${int(s.gateway.rate)}/s`,
        duo(s.baseline.ttfb),
        duo(s.gateway.ttfb),
        duo(s.added.ttfb, signed),
        s.referenceAdded ? duo(s.referenceAdded.ttfb, signed) : '—',
        diff(s.added.ttfb.p50, s.referenceAdded?.ttfb.p50),
        trio(s.added.chunkDelay, signed),
        ms(s.gateway.spread.p50),
        errs(s.gateway.errors),
        `${ms(s.cost.cpuMsPerRequest, 3)} ms`,
        noise(s.otherCores),
      ]),
    },
    {
      title: 'Gateway memory per phase, MiB (peak RSS reset before each phase)',
      head: ['phase', 'peak reset by', 'time', 'done', 'errors', 'RSS before', 'RSS after', 'peak RSS (VmHWM)'],
      rows: [
        ...phases.map((p) => [
          p.label + (p.rps === undefined ? '' : ` (${int(p.rps)} req/s)`),
          p.reset,
          `${p.seconds.toFixed(1)} s`,
          int(p.done),
          errs(p.errors),
          ms(p.rssBeforeMiB, 1),
          ms(p.rssAfterMiB, 1),
          ms(p.hwmMiB, 1),
        ]),
        ['whole run (idle RSS before the first phase; peak: the highest VmHWM read)', '—', '—', '—', '—', ms(r.memory.idleRssMiB, 1), ms(r.memory.finalRssMiB, 1), ms(r.memory.peakRssMiB, 1)],
      ],
    },
  ]
}

function text(t: Table): string {
  const widths = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((row) => row[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')
  return [t.title, line(t.head), widths.map((w) => '─'.repeat(w)).join('  '), ...t.rows.map(line)].join('\n')
}

function markdown(t: Table): string {
  const row = (cells: string[]) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`
  return [`### ${t.title}`, '', row(t.head), row(t.head.map(() => '---')), ...t.rows.map(row)].join('\n')
}

export const machineLine = (r: Results) =>
  `${r.date.slice(0, 10)} · ${r.machine.nproc} × ${r.machine.cpuModel} · ${r.machine.kernel} · Bun ${r.machine.bun} · gateway pinned to core ${r.setup.gatewayCore}, load and upstream to core ${r.setup.loadCore}`

export function textReport(r: Results, batch?: BatchBench): string {
  return [machineLine(r), ...r.setup.notes.map((n) => `note: ${n}`), '', ...[targetTable(r, batch), ...tables(r)].map(text).join('\n\n').split('\n')].join('\n')
}

/** Where the hand-written per-request CPU budget goes; run.ts keeps what is written there (sections.ts). */
const BUDGET_PLACEHOLDER = [BUDGET.start, '## Per-request CPU budget', '', '(Written by hand; `npm run bench` keeps this section as it is.)', BUDGET.end].join('\n')

export function markdownReport(r: Results, batch?: BatchBench): string {
  return [
    '# Benchmark',
    '',
    'Produced by `npm run bench` (scripts/bench/). A fake upstream (Bun) answers at once; the gateway',
    '(`switchyard serve` at `--log-level info`: auth, rate limits, validation, the per-request access log',
    'and generation recording on) runs pinned to one core; the load driver and the upstream share the',
    'other. Every figure is measured directly against the upstream, through the gateway and through a',
    'bare Elysia proxy (scripts/bench/bare-proxy.ts: no auth, limits, validation, logging or recording)',
    'on the gateway\'s core, each path back to back in the same run; the bare proxy takes the same client',
    'surface as the path (chat, messages or responses) and relays it to the same wire upstream, so it is',
    'the floor any proxy pays on this machine, and the targets are ratios to it. "Added" is the',
    'difference to the direct figure. Open-loop requests leave on a fixed schedule whether or not earlier',
    'ones have answered, so queueing shows; latency counts from the moment each left (the driver sleeps',
    'whole milliseconds between sends rather than spin on the load core). "Other load" is the CPU that processes outside the bench used meanwhile (% of one core); past',
    '10% (⚠) the machine was not quiet and the figures are disturbed. "Gateway core busy" near 100% means',
    'the gateway\'s core was the bottleneck; a max req/s marked "⚠ core N % busy" in the targets was not',
    'limited by that process (the load side or other work on the machine was), so its ratio says little.',
    'The memory phases reset the gateway\'s peak RSS (VmHWM, via /proc/<pid>/clear_refs) before each',
    'phase and read it after. The closed loop runs the gateway and the bare proxy in alternating rounds',
    'and keeps each one\'s median, so a drift of the machine weighs on both sides of the ratio alike.',
    'Reproduce with `apt-get install -y wrk` then `npm run bench` (about 12 minutes; run it on a quiet',
    'machine); `--only <paths>` and `--no-memory` narrow a run for quick comparisons.',
    '',
    `Machine: ${machineLine(r)}.`,
    ...r.setup.notes.map((n) => `\n> ${n}`),
    '',
    markdown(targetTable(r, batch)),
    '',
    BUDGET_PLACEHOLDER,
    '',
    tables(r).map(markdown).join('\n\n'),
    '',
  ].join('\n')
}
