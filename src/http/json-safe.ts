// JSON from clients, parsed safely: a `__proto__` key, which sets an object's prototype when a
// body is copied key by key, is refused anywhere in it, and so is nesting past MAX_JSON_DEPTH,
// which recursive code (schemas, encoders) would overflow on. Every JSON a client sends
// (bodies, JSONL lines) goes through here. `constructor` and `prototype` are ordinary keys: a
// copy sets them as its own, and they are words of real data (a tool schema's property, a
// model's tool input that comes back next turn); where the gateway looks a client's key or name
// up in a table of its own, it asks for own properties only.
import { HttpError } from './errors.ts'
import { checkNulInIds } from './nul.ts'

/** Nothing a real client sends nests this far. */
export const MAX_JSON_DEPTH = 64
/**
 * Objects and arrays in one generation body: a long agent session (thousands of messages with
 * their tool calls and parts) holds tens of thousands; a million tiny parts in 25 MiB held
 * the request thread for a quarter of a second to decode.
 */
export const MAX_BODY_NODES = 200_000
/**
 * Keys and array items in one generation body (an object's key counts with its value). JSON.parse
 * makes each one (a key about half a microsecond to a microsecond): a body of 2.5 million keys in
 * one object held the request thread for five seconds, and 16 million numbers fit in the body
 * limit. A session at a million tokens of context holds tens of thousands.
 */
export const MAX_BODY_VALUES = 250_000
const FORBIDDEN_KEYS = new Set(['__proto__'])
/**
 * A forbidden key can only be in the text spelled out or behind a `\u` escape: bodies with
 * neither (nearly all) skip the key check and pay only for the depth walk.
 */
const MAY_HOLD_FORBIDDEN_KEY = /__proto__|\\u/

type Node = Record<string, unknown> | unknown[]

/**
 * Whether `root` breaks a rule: 'rule' (depth, a forbidden key), 'crowded' (more than
 * `maxNodes` objects and arrays, or more than `maxValues` keys and array items), or false. The hot
 * path: iterative (a body 20,000 levels deep must not overflow the checker itself), no
 * allocation per node but the stack, and never past either bound.
 */
function breaksARule(root: unknown, checkKeys: boolean, maxNodes: number, maxValues: number): 'rule' | 'crowded' | false {
  if (typeof root !== 'object' || root === null) return false
  const nodes: Node[] = [root as Node]
  const depths: number[] = [0]
  // counted as they are found, so an array of a million objects stops the walk at the bound
  let found = 1
  let values = 0
  while (nodes.length > 0) {
    const v = nodes.pop()!
    const depth = depths.pop()!
    if (depth >= MAX_JSON_DEPTH) return 'rule'
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = v[i]
        if (++values > maxValues) return 'crowded'
        if (typeof c === 'object' && c !== null) {
          if (++found > maxNodes) return 'crowded'
          nodes.push(c as Node)
          depths.push(depth + 1)
        }
      }
      continue
    }
    for (const k in v) {
      if (checkKeys && FORBIDDEN_KEYS.has(k)) return 'rule'
      if (++values > maxValues) return 'crowded'
      const c = v[k]
      if (typeof c === 'object' && c !== null) {
        if (++found > maxNodes) return 'crowded'
        nodes.push(c as Node)
        depths.push(depth + 1)
      }
    }
  }
  return false
}

function placeOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`
  const k = key.length > 64 ? key.slice(0, 64) + '…' : key
  return parent ? `${parent}.${k}` : k
}

/** The 400 naming where the rule is broken: only once a body is known to break one. */
function violation(root: unknown, checkKeys: boolean): HttpError | undefined {
  const stack: [unknown, string, number][] = [[root, '', 0]]
  while (stack.length > 0) {
    const [v, place, depth] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (depth >= MAX_JSON_DEPTH) return new HttpError(400, `${place || 'Request body'}: nested more than ${MAX_JSON_DEPTH} levels deep`)
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((c, i) => [i, c]) : Object.entries(v)
    // reversed onto the stack, so the first offending place in document order is named
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, c] = entries[i]!
      if (checkKeys && typeof k === 'string' && FORBIDDEN_KEYS.has(k)) return new HttpError(400, `${placeOf(place, k)}: the key "${k}" is not allowed in a request body`)
      stack.push([c, placeOf(place, k), depth + 1])
    }
  }
  return undefined
}

/**
 * The 400 for a body of too many parts, naming its largest array or object among the first
 * `maxNodes` objects and arrays (where a million tiny parts, or keys, are), found without
 * walking the rest.
 */
export function crowded(root: unknown, maxNodes: number, maxValues: number): HttpError {
  const stack: [unknown, string][] = [[root, '']]
  let found = 1
  let largest = { place: '', length: -1, keys: false }
  walk: while (stack.length > 0) {
    const [v, place] = stack.pop()!
    if (Array.isArray(v)) {
      if (v.length > largest.length) largest = { place, length: v.length, keys: false }
      for (let i = 0; i < v.length; i++) {
        if (typeof v[i] !== 'object' || v[i] === null) continue
        if (++found > maxNodes) break walk
        stack.push([v[i], `${place}[${i}]`])
      }
      continue
    }
    let keys = 0
    for (const k in v as Record<string, unknown>) {
      keys++
      const c = (v as Record<string, unknown>)[k]
      if (typeof c !== 'object' || c === null) continue
      if (++found > maxNodes) break walk
      stack.push([c, placeOf(place, k)])
    }
    if (keys > largest.length) largest = { place, length: keys, keys: true }
  }
  // a place is named where it holds much of the excess (a body of many duplicate keys has none)
  const named = largest.length > maxNodes / 10 || largest.length > maxValues / 10
  const where = named ? `${largest.place || 'Request body'}: ${largest.length} ${largest.keys ? 'keys' : 'items'}; ` : ''
  return new HttpError(400, `${where}a request body may hold at most ${maxNodes} JSON objects and arrays, and ${maxValues} keys and array items, in all`)
}

/**
 * Throws a 400 naming the place of a forbidden key, of nesting past MAX_JSON_DEPTH, or of
 * the largest array of a body with more than `maxNodes` objects and arrays. Given the text
 * `root` was parsed from, the key check is skipped when the text cannot hold a forbidden key.
 */
export function checkJsonValue(root: unknown, text?: string, maxNodes = Infinity, maxValues = Infinity): void {
  const checkKeys = text === undefined || MAY_HOLD_FORBIDDEN_KEY.test(text)
  const broken = breaksARule(root, checkKeys, maxNodes, maxValues)
  if (broken === 'crowded') throw crowded(root, maxNodes, maxValues)
  if (broken) throw violation(root, checkKeys) ?? new HttpError(400, 'Request body breaks the JSON rules')
  // an id holding a NUL character: only a text with the escape can carry one
  if (checkKeys && (text === undefined || text.includes('\\u0000'))) checkNulInIds(root)
}

/**
 * JSON.parse, then the checks above (prototype keys, depth, parts): for every JSON a client sends (bodies, JSONL lines).
 * `maxNodes` bounds its objects and arrays and `maxValues` its keys and array items (generation
 * bodies: MAX_BODY_NODES, MAX_BODY_VALUES), so what decodes it afterwards never walks a million
 * tiny parts on the request thread.
 */
export function parseJsonSafe(text: string, what = 'JSON body', maxNodes = Infinity, maxValues = Infinity): unknown {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (e) {
    throw new HttpError(400, `Malformed ${what}: ${(e as Error).message}`)
  }
  checkJsonValue(v, text, maxNodes, maxValues)
  return v
}
