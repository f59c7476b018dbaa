// JSON from clients, parsed safely (issue 9, D3): keys that reach an object's prototype when
// a body is copied key by key (`__proto__`, `constructor`, `prototype`) are refused anywhere
// in it, and so is nesting past MAX_JSON_DEPTH, which recursive code (schemas, encoders)
// would overflow on. Every JSON a client sends (bodies, JSONL lines) goes through here.
import { HttpError } from './errors.ts'

/** Nothing a real client sends nests this far. */
export const MAX_JSON_DEPTH = 64
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
/**
 * A forbidden key can only be in the text spelled out or behind a `\u` escape: bodies with
 * neither (nearly all) skip the key check and pay only for the depth walk.
 */
const MAY_HOLD_FORBIDDEN_KEY = /__proto__|constructor|prototype|\\u/

type Node = Record<string, unknown> | unknown[]

/**
 * Whether `root` breaks a rule. The hot path: iterative (a body 20,000 levels deep must not
 * overflow the checker itself), no allocation per node but the stack, cost by the number of
 * objects and arrays, not of bytes.
 */
function breaksARule(root: unknown, checkKeys: boolean): boolean {
  if (typeof root !== 'object' || root === null) return false
  const nodes: Node[] = [root as Node]
  const depths: number[] = [0]
  while (nodes.length > 0) {
    const v = nodes.pop()!
    const depth = depths.pop()!
    if (depth >= MAX_JSON_DEPTH) return true
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = v[i]
        if (typeof c === 'object' && c !== null) {
          nodes.push(c as Node)
          depths.push(depth + 1)
        }
      }
      continue
    }
    for (const k in v) {
      if (checkKeys && FORBIDDEN_KEYS.has(k)) return true
      const c = v[k]
      if (typeof c === 'object' && c !== null) {
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
 * Throws a 400 naming the place of a forbidden key or of nesting past MAX_JSON_DEPTH.
 * Given the text `root` was parsed from, the key check is skipped when the text cannot hold
 * a forbidden key.
 */
export function checkJsonValue(root: unknown, text?: string): void {
  const checkKeys = text === undefined || MAY_HOLD_FORBIDDEN_KEY.test(text)
  if (!breaksARule(root, checkKeys)) return
  throw violation(root, checkKeys) ?? new HttpError(400, 'Request body breaks the JSON rules')
}

/** JSON.parse, then the D3 checks: for every JSON a client sends (bodies, JSONL lines). */
export function parseJsonSafe(text: string, what = 'JSON body'): unknown {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (e) {
    throw new HttpError(400, `Malformed ${what}: ${(e as Error).message}`)
  }
  checkJsonValue(v, text)
  return v
}
