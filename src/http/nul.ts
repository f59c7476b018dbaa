// A NUL character (U+0000) in an id a client names. No id of this gateway holds one, and
// PostgreSQL's text cannot: a lookup binding one fails there ("invalid byte sequence"), where
// SQLite finds nothing. So an id holding one is refused up front, a 400 naming where, on
// either database: in a URL (`%00` in the path or a query value), or in a JSON body under a
// key that names an id. Message text and other values may hold one (stored as JSON, escaped).
import { HttpError } from './errors.ts'

/** Keys whose string value (or array of strings) is an id or a name the gateway looks up. */
const ID_KEY = /(^|_)ids?$|^(conversation|container)$/

const nul = (place: string) => new HttpError(400, `${place}: holds a NUL character (\\u0000 or %00), which no id has`)

/** The 400 for a URL whose path or query holds `%00`, naming the path or the query parameter; else undefined. */
export function nulInUrl(url: string, pathStart: number): HttpError | undefined {
  const at = url.indexOf('%00', Math.max(pathStart, 0))
  if (at < 0) return undefined
  const q = url.indexOf('?', Math.max(pathStart, 0))
  if (q < 0 || at < q) return nul('path')
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) if (k.includes('\0') || v.includes('\0')) return nul(k.replaceAll('\0', '\\u0000').slice(0, 64))
  return undefined
}

/**
 * Throws the 400 naming the first id in `root` that holds a NUL character. Only called for a body
 * whose text holds `\u0000` (JSON cannot carry one otherwise); the depth was checked before.
 */
export function checkNulInIds(root: unknown): void {
  const stack: [unknown, string][] = [[root, '']]
  while (stack.length > 0) {
    const [v, place] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((c, i) => [i, c]) : Object.entries(v)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, c] = entries[i]!
      const at = typeof k === 'number' ? `${place}[${k}]` : place ? `${place}.${k.slice(0, 64)}` : k.slice(0, 64)
      if (typeof k === 'string' && ID_KEY.test(k)) {
        if (typeof c === 'string' && c.includes('\0')) throw nul(at)
        if (Array.isArray(c)) {
          const j = c.findIndex((x) => typeof x === 'string' && x.includes('\0'))
          if (j >= 0) throw nul(`${at}[${j}]`)
        }
      }
      stack.push([c, at])
    }
  }
}
