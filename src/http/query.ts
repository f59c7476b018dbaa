// A route's query string held to the parameters it takes: any other is a 400 naming it (a
// misspelt one would answer something else without a word).
import { echo, HttpError } from './errors.ts'

/** Throws a 400 for the first parameter `known` lacks; `takes` says what the route takes ("the listing takes limit, after"). */
export function onlyKnownParams(q: URLSearchParams, known: ReadonlySet<string>, takes: string): void {
  for (const name of q.keys()) if (!known.has(name)) throw new HttpError(400, `${echo(name)}: unknown query parameter; ${takes}`)
}

/**
 * Throws a 400 for the first parameter given more than once: a route reads one value, and the
 * other was ignored without a word. `repeatable`: the ones a list is given in (`ids[]=a&ids[]=b`).
 */
export function eachOnce(q: URLSearchParams, repeatable: readonly string[] = []): void {
  for (const name of new Set(q.keys())) if (q.getAll(name).length > 1 && !repeatable.includes(name)) throw new HttpError(400, `${echo(name)}: given more than once`)
}

/** `onlyKnownParams` and `eachOnce` for a route that takes `names` (none: no query at all), `what` naming it in the message. */
export function takesOnly(q: URLSearchParams, what: string, names: readonly string[], repeatable: readonly string[] = []): void {
  onlyKnownParams(q, new Set(names), names.length ? `${what} takes ${names.join(', ')}` : `${what} takes no query parameters`)
  eachOnce(q, repeatable)
}

/** What a route takes in its query, `what` naming the route in the message. */
export interface RouteQuery {
  what: string
  names: readonly string[]
}

/** The request's query, held to what `route` takes (`takesOnly`). */
export function queryTaking(request: Request, route: RouteQuery): URLSearchParams {
  const q = new URL(request.url).searchParams
  takesOnly(q, route.what, route.names)
  return q
}
