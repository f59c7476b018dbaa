// A route's query string held to the parameters it takes: any other is a 400 naming it (a
// misspelt one would answer something else without a word).
import { echo, HttpError } from './errors.ts'

/** Throws a 400 for the first parameter `known` lacks; `takes` says what the route takes ("the listing takes limit, after"). */
export function onlyKnownParams(q: URLSearchParams, known: ReadonlySet<string>, takes: string): void {
  for (const name of q.keys()) if (!known.has(name)) throw new HttpError(400, `${echo(name)}: unknown query parameter; ${takes}`)
}
