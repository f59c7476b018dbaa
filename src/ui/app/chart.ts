// A stacked bar chart in SVG: one bar per time bucket, one segment per model. Each segment
// carries its bucket, model and value as data attributes (and a <title> tooltip), so what is
// drawn can be checked against the records behind it. Past DENSE buckets each model's
// segments are drawn as one path carrying the model's total.
import { svg } from './dom.ts'
import { isolated } from './fmt.ts'

export interface Stack {
  label: string
  color: string
  values: number[]
}

const W = 960
const H = 260
const PAD = { left: 64, right: 12, top: 12, bottom: 28 }
/** Above this many buckets a model's bars are one path (no per-bar tooltip). */
const DENSE = 240

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
  const x = (i: number) => PAD.left + i * step + (step - barW) / 2
  const bases = buckets.map(() => 0)
  const dense = buckets.length > DENSE
  for (const s of stacks) {
    // many buckets (30 days by the hour): one path per model instead of thousands of elements
    let d = ''
    let total = 0
    s.values.forEach((v, i) => {
      if (!(v > 0)) return
      const top = y(bases[i]! + v)
      const height = Math.max(0.5, y(bases[i]!) - top)
      bases[i]! += v
      total += v
      if (dense) d += `M${x(i).toFixed(2)} ${top.toFixed(2)}h${barW.toFixed(2)}v${height.toFixed(2)}h${(-barW).toFixed(2)}z`
      else
        root.append(
          svg('rect', { x: x(i), y: top, width: barW, height, fill: s.color, class: 'seg', 'data-bucket': buckets[i], 'data-model': s.label, 'data-value': v },
            svg('title', null, `${tick(buckets[i]!)} · ${isolated(s.label)}: ${format(v)}`)),
        )
    })
    if (dense && d) root.append(svg('path', { d, fill: s.color, class: 'seg-path', 'data-model': s.label, 'data-total': total }, svg('title', null, `${isolated(s.label)}: ${format(total)} in all`)))
  }
  buckets.forEach((b, i) => {
    if (i % every === 0) root.append(svg('text', { x: x(i) + barW / 2, y: H - 8, 'text-anchor': 'middle', class: 'axis' }, tick(b)))
  })
  return root
}
