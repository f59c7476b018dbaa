// Reads GET /metrics as a scraper would: every sample line as name, labels and value, and sums
// over the samples of a name whose labels match.

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = LINE.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL)) labels[k!] = v!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
    out.push({ name: m[1]!, labels, value: Number(m[3] === '+Inf' ? Infinity : m[3]) })
  }
  return out
}

/** The sum of `name`'s samples whose labels include every one of `match`. */
export function total(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0)
}

/** Every sample of `name`, as `label=value,…` → value, for a readable equality. */
export function byLabels(samples: Sample[], name: string, keys: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const s of samples) {
    if (s.name !== name || s.value === 0) continue
    const k = keys.map((key) => `${key}=${s.labels[key]}`).join(',')
    out[k] = (out[k] ?? 0) + s.value
  }
  return out
}
