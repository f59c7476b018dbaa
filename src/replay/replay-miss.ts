// A request no cassette holds: the client is told which cassette file was looked in, the
// request's match key, and the first field where it differs from the recording nearest to it
// (same path and model, fewest differing fields), so a test that changed its request sees what.
// The log says more: the directory, and the nearest recording's own match key. The answer does
// not, since the recording may be another key's: its key is a hash of its whole request, which
// a short secret in it can be guessed back from, and the directory is the server's own path.
//
// 424 Failed Dependency: the request is well formed and would be served live; what it depends
// on, a recording, is missing. No provider answers 424, so it is never mistaken for an
// upstream's refusal, and the SDKs do not retry it (they retry 408, 409, 429 and 5xx: a 409
// would be sent again and again, each time missing).
import { UpstreamError } from '../ir/errors.ts'
import type { CassetteDir, CassetteRequest } from './cassette-dir.ts'
import { firstDifference } from './match.ts'

export const MISS_STATUS = 424

/** The miss answered to the client, and the line logged for the operator. */
export function missError(dir: CassetteDir, req: CassetteRequest): { error: UpstreamError; logged: string } {
  const near = nearest(dir, req)
  const what = `has no recording of POST ${req.path} with match key ${req.key}`
  const told = near
    ? `; the nearest recorded differs at ${near.field}`
    : `; nothing is recorded there for ${req.path}${req.model ? ` and model ${req.model}` : ''}`
  const error = new UpstreamError({ status: MISS_STATUS, type: 'cassette_miss', message: `cassette miss: ${req.file} ${what}${told}` })
  const logged = `cassette miss: ${dir.dir} (${req.file}) ${what}${near ? `; nearest recorded: ${near.key}, which differs at ${near.field}` : told}`
  return { error, logged }
}

function nearest(dir: CassetteDir, req: CassetteRequest): { key: string; field: string } | undefined {
  let best: { key: string; field: string; distance: number } | undefined
  for (const e of dir.entries(req.file)) {
    if (e.request.path !== req.path || e.model !== req.model) continue
    const body = dir.bodyOf(e)
    const d = distance(body, req.body)
    if (best && d >= best.distance) continue
    best = { key: e.key, field: firstDifference({ path: e.request.path, body }, { path: req.path, body: req.body }) ?? '(none)', distance: d }
  }
  return best
}

/** How many leaves two JSON values differ in (a value on one side only counts once). */
export function distance(a: unknown, b: unknown): number {
  if (Object.is(a, b)) return 0
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return 1
  let n = 0
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) n += distance((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
  return n
}
