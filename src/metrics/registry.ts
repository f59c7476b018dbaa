// Counters, gauges and histograms kept as plain numbers in cells. A cell is one labelled series:
// its label text is rendered once, when it is made, and the caller keeps the cell, so counting
// is a field update (no label lookup, no string). Scrape-time gauges are made afresh at each
// scrape instead (`reset`, then `cell`).

export type Kind = 'counter' | 'gauge' | 'histogram'

/** One series of a counter or a gauge. */
export interface Cell {
  /** `{name="value",…}`, or '' without labels. */
  readonly labels: string
  value: number
}

/** One series of a histogram: counts per bucket (not cumulative; the last one is +Inf), sum and count. */
export interface HistogramCell {
  readonly labels: string
  readonly counts: Float64Array
  sum: number
  count: number
}

/** Label values as the text formats want them: backslash, quote and newline escaped. */
export function escapeLabel(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : v
}

export function labelText(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return ''
  let out = '{'
  for (let i = 0; i < names.length; i++) out += `${i > 0 ? ',' : ''}${names[i]}="${escapeLabel(values[i] ?? '')}"`
  return out + '}'
}

abstract class Family<C extends { labels: string }> {
  abstract readonly kind: Kind
  readonly cells: C[] = []
  /** `name` is the family's: a counter's samples add `_total` to it. */
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  protected abstract make(labels: string): C

  /** A new series with these label values (in `labelNames` order). Keep it: counting goes to it directly. */
  cell(values: readonly string[] = []): C {
    const c = this.make(labelText(this.labelNames, values))
    this.cells.push(c)
    return c
  }

  /** Drops every series (scrape-time gauges, made again from state). */
  reset(): void {
    this.cells.length = 0
  }
}

export class Counter extends Family<Cell> {
  readonly kind = 'counter'
  protected make(labels: string): Cell {
    return { labels, value: 0 }
  }
}

export class Gauge extends Family<Cell> {
  readonly kind = 'gauge'
  protected make(labels: string): Cell {
    return { labels, value: 0 }
  }

  /** A scrape-time series. */
  set(values: readonly string[], value: number): void {
    this.cell(values).value = value
  }
}

export class Histogram extends Family<HistogramCell> {
  readonly kind = 'histogram'
  constructor(name: string, help: string, labelNames: readonly string[], readonly bounds: readonly number[]) {
    super(name, help, labelNames)
  }

  protected make(labels: string): HistogramCell {
    return { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }
  }

  observe(c: HistogramCell, v: number): void {
    const b = this.bounds
    let i = 0
    while (i < b.length && v > b[i]!) i++
    c.counts[i]!++
    c.sum += v
    c.count++
  }
}

export type AnyFamily = Counter | Gauge | Histogram

export class Registry {
  readonly families: AnyFamily[] = []

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames))
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames))
  }

  histogram(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labelNames, bounds))
  }

  private add<F extends AnyFamily>(f: F): F {
    if (this.families.some((g) => g.name === f.name)) throw new Error(`metric ${f.name} registered twice`)
    this.families.push(f)
    return f
  }
}
