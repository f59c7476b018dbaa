// A request no cassette holds: the client is told where the gateway looked, the request's
// match key, and the recording nearest to it (same path and model, fewest differing fields)
// with the first field where the two differ, so a test that changed its request sees what.
//
// 424 Failed Dependency: the request is well formed and would be served live; what it depends
// on, a recording, is missing. No provider answers 424, so it is never mistaken for an
// upstream's refusal, and the SDKs do not retry it (they retry 408, 409, 429 and 5xx: a 409
// would be sent again and again, each time missing).
import { UpstreamError } from '../ir/errors.ts'
import type { CassetteDir, CassetteRequest } from './cassette-dir.ts'
import { firstDifference } from './match.ts'

export const MISS_STATUS = 424

export function missError(dir: CassetteDir, req: CassetteRequest): UpstreamError {
  const near = nearest(dir, req)
  const tail = near
    ? `; nearest recorded: ${near.key}, which differs at ${near.field}`
    : `; nothing is recorded there for ${req.path}${req.model ? ` and model ${req.model}` : ''}`
  return new UpstreamError({
    status: MISS_STATUS,
    type: 'cassette_miss',
    message: `cassette miss: ${dir.dir} (${req.file}) has no recording of POST ${req.path} with match key ${req.key}${tail}`,
  })
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
