// The earlier absolute targets (for the chat paths, then the messages and the responses paths)
// as data, kept as a secondary table beside the ratio targets (targets.ts).
import type { Results } from './results.ts'

export interface Target {
  label: string
  unit: 'ms' | 'req/s'
  /** `max`: the figure must be at most `limit`; `min`: at least. */
  bound: 'max' | 'min'
  limit: number
  pick(r: Results): number | undefined
}

const openLoop = (r: Results, path: string, rate: number) => r.openLoop.find((o) => o.path === path && o.rate === rate)
const closedLoop = (r: Results, path: string) => r.closedLoop.find((c) => c.path === path)
const stream = (r: Results, path: string) => r.streams.find((s) => s.path === path)

export const EARLIER_TARGETS: Target[] = [
  { label: 'pass-through: added latency p50 at 1,000 req/s', unit: 'ms', bound: 'max', limit: 0.45, pick: (r) => openLoop(r, 'pass-through', 1000)?.added.p50 },
  { label: 'pass-through: added latency p99 at 1,000 req/s', unit: 'ms', bound: 'max', limit: 1.5, pick: (r) => openLoop(r, 'pass-through', 1000)?.added.p99 },
  { label: 'pass-through: max req/s, gateway on one core', unit: 'req/s', bound: 'min', limit: 8000, pick: (r) => closedLoop(r, 'pass-through')?.gateway.rps },
  { label: 'pass-through stream: added first byte p50', unit: 'ms', bound: 'max', limit: 0.5, pick: (r) => stream(r, 'pass-through')?.added.ttfb.p50 },
  {
    // not a figure of the issue but its wording: a chunk held back by even one send gap fails
    label: 'pass-through stream: chunks as sent (added chunk delay p90 < one 4 ms gap)',
    unit: 'ms',
    bound: 'max',
    limit: 4,
    pick: (r) => stream(r, 'pass-through')?.added.chunkDelay.p90,
  },
  { label: 'translated (Claude via chat): max req/s, one core', unit: 'req/s', bound: 'min', limit: 4000, pick: (r) => closedLoop(r, 'translated')?.gateway.rps },
  // the messages paths meet the chat path's targets, and so do the responses paths
  ...(['messages pass-through', 'messages translated', 'responses pass-through', 'responses translated'] as const).flatMap((path): Target[] => [
    { label: `${path}: added latency p50 at 1,000 req/s`, unit: 'ms', bound: 'max', limit: 0.45, pick: (r) => openLoop(r, path, 1000)?.added.p50 },
    { label: `${path}: max req/s, gateway on one core`, unit: 'req/s', bound: 'min', limit: 8000, pick: (r) => closedLoop(r, path)?.gateway.rps },
    { label: `${path} stream: added first byte p50`, unit: 'ms', bound: 'max', limit: 0.5, pick: (r) => stream(r, path)?.added.ttfb.p50 },
  ]),
]

export interface Verdict {
  label: string
  unit: string
  target: string
  measured: number | null
  pass: boolean | null
}

export function earlierVerdicts(r: Results): Verdict[] {
  return EARLIER_TARGETS.map((t) => {
    const v = t.pick(r)
    const measured = v === undefined || !Number.isFinite(v) ? null : v
    return {
      label: t.label,
      unit: t.unit,
      target: `${t.bound === 'max' ? '≤ +' : '≥ '}${t.limit.toLocaleString('en-US')} ${t.unit}`,
      measured,
      pass: measured === null ? null : t.bound === 'max' ? measured <= t.limit : measured >= t.limit,
    }
  })
}
