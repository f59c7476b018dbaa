// The nulls a fitted strict schema (strict-fit.ts) made the model send, taken back out of its
// answer: a property that was optional in the client's schema and came back null is left out, so
// the client gets what its own schema describes. Only where the fitted schema added the null: a
// property the client's schema lets be null keeps its null. The answer is walked beside the
// fitted schema; under an anyOf, the one branch the value's shape fits is followed (strict mode
// sends every property, so an object's keys name its branch), and where none or several fit the
// value is left as it came. Pure.
import { isObj } from '../lib/json.ts'
import { resolve, type AddedNulls } from './strict-fit.ts'

type Node = Record<string, unknown>

const MAX_DEPTH = 64

/** JSON text with the added nulls taken out; the text as it came when it is no JSON or nothing was taken. */
export function withoutAddedNulls(text: string, added: AddedNulls): string {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return text
  }
  const out = strip(v, added.root, added, 0)
  return out === v ? text : JSON.stringify(out)
}

/** The value without the added nulls: the same value where nothing was taken. */
function strip(v: unknown, s: Node, a: AddedNulls, depth: number): unknown {
  if (depth > MAX_DEPTH) return v
  if (typeof s.$ref === 'string') {
    const target = resolve(a.root, s.$ref)
    return target ? strip(v, target, a, depth + 1) : v
  }
  if (Array.isArray(s.anyOf)) {
    const fits = s.anyOf.filter((b) => isObj(b) && shapeFits(v, b, a.root, depth + 1))
    return fits.length === 1 ? strip(v, fits[0] as Node, a, depth + 1) : v
  }
  if (Array.isArray(v) && isObj(s.items)) {
    const items = s.items
    const out = v.map((x) => strip(x, items, a, depth + 1))
    return out.some((x, i) => x !== v[i]) ? out : v
  }
  if (!isObj(v) || !isObj(s.properties)) return v
  const props = s.properties
  const added = a.at.get(s)
  let changed = false
  const kept: [string, unknown][] = []
  for (const [k, x] of Object.entries(v)) {
    if (x === null && added?.has(k)) {
      changed = true
      continue
    }
    const y = Object.hasOwn(props, k) && isObj(props[k]) ? strip(x, props[k] as Node, a, depth + 1) : x
    changed ||= y !== x
    kept.push([k, y])
  }
  // (fromEntries: a `__proto__` key stays a key)
  return changed ? Object.fromEntries(kept) : v
}

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v

/** Whether `v` has the shape of branch `b`: its type, its enum or const, an object's keys. */
function shapeFits(v: unknown, b: Node, root: Node, depth: number): boolean {
  if (depth > MAX_DEPTH) return false
  if (typeof b.$ref === 'string') {
    const target = resolve(root, b.$ref)
    return target !== undefined && shapeFits(v, target, root, depth + 1)
  }
  if (Array.isArray(b.anyOf)) return b.anyOf.some((x) => isObj(x) && shapeFits(v, x, root, depth + 1))
  const t = typeOf(v)
  if (b.type !== undefined) {
    const types = Array.isArray(b.type) ? b.type : [b.type]
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return false
  }
  if (Array.isArray(b.enum) && !b.enum.includes(v as never)) return false
  if ('const' in b && b.const !== v) return false
  if (t !== 'object' || !isObj(b.properties)) return true
  const names = Object.keys(b.properties)
  const keys = Object.keys(v as Node)
  return keys.length === names.length && keys.every((k) => Object.hasOwn(b.properties as Node, k))
}
