// The usage report's JSON, written a slice of its series at a time with a turn of the event
// loop between slices: the widest report (10,000 hourly points, 3.4 MB; with breakdown=model,
// 20 series of 2,500) encoded at once held the loop for tens to hundreds of milliseconds, eight
// of them at once for over a second. The bytes are those JSON.stringify would give.
import { nextTurn } from '../lib/turn.ts'
import type { SeriesPoint, UsageReport } from './report.ts'

/** Points of a series encoded between two turns of the loop. */
const SLICE = 1000

/** The report's JSON in pieces, each a few hundred KB at most. */
function* pieces(r: UsageReport): Generator<string> {
  let head = '{'
  for (const [k, v] of Object.entries(r)) {
    if (v === undefined) continue
    const key = `${head}${JSON.stringify(k)}:`
    head = ','
    if (k === 'series') yield* seriesPieces(key, v as SeriesPoint[])
    else if (k === 'series_by_model') {
      let open = `${key}[`
      for (const m of v as NonNullable<UsageReport['series_by_model']>) {
        yield* seriesPieces(`${open}{"model":${JSON.stringify(m.model)},"series":`, m.series)
        yield '}'
        open = ','
      }
      if (open !== ',') yield open
      yield ']'
    } else yield key + JSON.stringify(v)
  }
  yield '}'
}

function* seriesPieces(before: string, series: SeriesPoint[]): Generator<string> {
  if (series.length === 0) return yield `${before}[]`
  for (let i = 0; i < series.length; i += SLICE) {
    const json = JSON.stringify(series.slice(i, i + SLICE))
    yield `${i === 0 ? before + '[' : ','}${json.slice(1, -1)}${i + SLICE >= series.length ? ']' : ''}`
  }
}

/** The report as a JSON response, a piece a pull, a turn of the loop before each but the first. */
export function reportResponse(report: UsageReport): Response {
  const encoder = new TextEncoder()
  const it = pieces(report)
  let first = true
  const body = new ReadableStream<Uint8Array>({
    async pull(out) {
      if (!first) await nextTurn()
      first = false
      const next = it.next()
      if (next.done) return out.close()
      out.enqueue(encoder.encode(next.value))
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/json;charset=utf-8' } })
}
