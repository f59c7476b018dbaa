// The registry as text: the Prometheus text format 0.0.4, or OpenMetrics 1.0 when the scraper's
// Accept asks for it (Prometheus itself does). They differ in a counter's family name (0.0.4
// names it with `_total`, OpenMetrics without) and in the closing `# EOF`.
import type { AnyFamily, HistogramCell } from './registry.ts'

export type Format = 'prometheus' | 'openmetrics'

export const CONTENT_TYPE: Record<Format, string> = {
  prometheus: 'text/plain; version=0.0.4; charset=utf-8',
  openmetrics: 'application/openmetrics-text; version=1.0.0; charset=utf-8',
}

/** OpenMetrics when the Accept header names it at all; the 0.0.4 text format otherwise. */
export function formatFor(accept: string | null): Format {
  return accept !== null && accept.includes('application/openmetrics-text') ? 'openmetrics' : 'prometheus'
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

/** A bucket bound as a float in both formats (`1.0`, `0.25`), so its series is the same whichever was scraped. */
function le(bound: number): string {
  return Number.isInteger(bound) ? bound.toFixed(1) : String(bound)
}

/** `{a="x"}` + `le="1.0"` → `{a="x",le="1.0"}`. */
function withLe(labels: string, bound: string): string {
  return labels === '' ? `{le="${bound}"}` : `${labels.slice(0, -1)},le="${bound}"}`
}

function histogramLines(name: string, bounds: readonly string[], c: HistogramCell, out: string[]): void {
  let cumulative = 0
  for (let i = 0; i < bounds.length; i++) {
    cumulative += c.counts[i]!
    out.push(`${name}_bucket${withLe(c.labels, bounds[i]!)} ${cumulative}`)
  }
  out.push(`${name}_bucket${withLe(c.labels, '+Inf')} ${c.count}`)
  out.push(`${name}_sum${c.labels} ${num(c.sum)}`)
  out.push(`${name}_count${c.labels} ${c.count}`)
}

export function render(families: readonly AnyFamily[], format: Format): string {
  const out: string[] = []
  for (const f of families) {
    const counter = f.kind === 'counter'
    const family = counter && format === 'prometheus' ? `${f.name}_total` : f.name
    out.push(`# HELP ${family} ${escapeHelp(f.help)}`, `# TYPE ${family} ${f.kind}`)
    if (f.kind === 'histogram') {
      const bounds = f.bounds.map(le)
      for (const c of f.cells) histogramLines(f.name, bounds, c, out)
      continue
    }
    const sample = counter ? `${f.name}_total` : f.name
    for (const c of f.cells) out.push(`${sample}${c.labels} ${num(c.value)}`)
  }
  if (format === 'openmetrics') out.push('# EOF')
  return out.join('\n') + '\n'
}
