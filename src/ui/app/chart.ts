// A stacked bar chart in SVG: one bar per time bucket, one segment per model. Each segment
// carries its bucket, model and value as data attributes (and a <title> tooltip), so what is
// drawn can be checked against the records behind it.
import { svg } from './dom.ts'

export interface Stack {
  label: string
  color: string
  values: number[]
}

const W = 960
const H = 260
const PAD = { left: 64, right: 12, top: 12, bottom: 28 }

function niceMax(x: number): number {
  if (x <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(x))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p
  return 10 * p
}

export function stackedBars(buckets: string[], stacks: Stack[], format: (v: number) => string, tick: (iso: string) => string): SVGSVGElement {
  const totals = buckets.map((_, i) => stacks.reduce((a, s) => a + s.values[i]!, 0))
  const max = niceMax(Math.max(0, ...totals))
  const plotW = W - PAD.left - PAD.right
  const plotH = H - PAD.top - PAD.bottom
  const step = plotW / Math.max(1, buckets.length)
  const barW = Math.max(1, step * 0.8)
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': 'usage over time, stacked by model' })
  for (let t = 0; t <= 4; t++) {
    const v = (max * t) / 4
    root.append(svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'grid' }))
    root.append(svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, format(v)))
  }
  const every = Math.max(1, Math.ceil(buckets.length / 8))
  buckets.forEach((b, i) => {
    const x = PAD.left + i * step + (step - barW) / 2
    let base = 0
    for (const s of stacks) {
      const v = s.values[i]!
      if (v <= 0) continue
      const top = y(base + v)
      root.append(
        svg('rect', { x, y: top, width: barW, height: Math.max(0.5, y(base) - top), fill: s.color, class: 'seg', 'data-bucket': b, 'data-model': s.label, 'data-value': v },
          svg('title', null, `${tick(b)} · ${s.label}: ${format(v)}`)),
      )
      base += v
    }
    if (i % every === 0) root.append(svg('text', { x: x + barW / 2, y: H - 8, 'text-anchor': 'middle', class: 'axis' }, tick(b)))
  })
  return root
}
