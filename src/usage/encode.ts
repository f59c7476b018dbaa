// The usage report's JSON, written a slice of its series at a time with a turn of the event
// loop between slices: the widest report (10,000 hourly points, 3.4 MB; with breakdown=model,
// 20 series of 2,500) encoded at once held the loop for tens to hundreds of milliseconds, eight
// of them at once for over a second. The bytes are those JSON.stringify would give.
import { arrayPieces, piecesResponse } from '../lib/json-pieces.ts'
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
    if (k === 'series') yield* arrayPieces(key, v as SeriesPoint[], SLICE)
    else if (k === 'series_by_model') {
      let open = `${key}[`
      for (const m of v as NonNullable<UsageReport['series_by_model']>) {
        yield* arrayPieces(`${open}{"model":${JSON.stringify(m.model)},"series":`, m.series, SLICE)
        yield '}'
        open = ','
      }
      if (open !== ',') yield open
      yield ']'
    } else yield key + JSON.stringify(v)
  }
  yield '}'
}

/** The report as a JSON response, a piece a pull, a turn of the loop before each but the first. */
export function reportResponse(report: UsageReport): Response {
  // a short one (the usual: 24 hours, 30 days) is written whole, with its length, as any other reply
  const points = report.series.length + (report.series_by_model ?? []).reduce((n, m) => n + m.series.length, 0)
  if (points <= SLICE) return Response.json(report)
  return piecesResponse(pieces(report))
}
