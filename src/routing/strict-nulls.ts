// The nulls a fitted strict schema (strict-fit.ts) made the model send, taken back out of its
// answer: a property that was optional in the client's schema and came back null is left out, so
// the client gets what its own schema describes. Only where the fitted schema added the null: a
// property the client's schema lets be null keeps its null. The answer is walked beside the
// fitted schema; under an anyOf, the one branch the value's shape fits is followed (strict mode
// sends every property, so an object's keys, and the consts and enums of its properties, name its
// branch), and where none or several fit the value is left as it came. The walk is bounded in
// steps (a schema whose unions name each other branches at every level): past them the whole
// answer goes as it came. A number is written back as the model wrote it (an id past 2^53, a
// price written 1.50), not as a double reads it. Pure.
import { isObj } from '../lib/json.ts'
import { resolve, type AddedNulls } from './strict-fit.ts'

type Node = Record<string, unknown>

const MAX_DEPTH = 64
/**
 * Steps one answer's cleaning may take (each a node of the schema against a value): a few for
 * each character of the answer, as many as a long answer's values need, and never the billions
 * of paths a few dozen definitions can hold.
 */
const STEPS_BASE = 100_000
const STEPS_A_CHARACTER = 10

/** Thrown when the steps ran out: the answer goes as it came. */
const OUT_OF_STEPS = new Error('strict-nulls: out of steps')

/** JSON.rawJSON and JSON.isRawJSON (JSON.parse source text access), not yet in TypeScript's lib. */
const RAW = JSON as unknown as { rawJSON(text: string): object; isRawJSON(v: unknown): v is { readonly rawJSON: string } }

/** A number a double would write back otherwise (digits past its precision, 1.50, 1e3) kept as its text. */
function asWritten(_key: string, v: unknown, context?: { source?: string }): unknown {
  return typeof v === 'number' && context?.source !== undefined && JSON.stringify(v) !== context.source ? RAW.rawJSON(context.source) : v
}

/** The value, a number kept as its text read as a number. */
const plain = (v: unknown): unknown => (RAW.isRawJSON(v) ? Number(v.rawJSON) : v)

interface Walk {
  a: AddedNulls
  steps: number
  /** Whether a value may be of a branch, by value and branch: unions naming each other reach one often. */
  fits: Map<unknown, Map<Node, boolean>>
}

/** JSON text with the added nulls taken out; the text as it came when it is no JSON or nothing was taken. */
export function withoutAddedNulls(text: string, added: AddedNulls): string {
  let v: unknown
  try {
    v = JSON.parse(text, asWritten)
  } catch {
    return text
  }
  let out: unknown
  try {
    out = strip(v, added.root, { a: added, steps: STEPS_BASE + STEPS_A_CHARACTER * text.length, fits: new Map() }, 0)
  } catch (e) {
    if (e === OUT_OF_STEPS) return text
    throw e
  }
  return out === v ? text : JSON.stringify(out)
}

function step(w: Walk): void {
  if (--w.steps < 0) throw OUT_OF_STEPS
}

/** The value without the added nulls: the same value where nothing was taken. */
function strip(v: unknown, s: Node, w: Walk, depth: number): unknown {
  if (depth > MAX_DEPTH || RAW.isRawJSON(v)) return v
  step(w)
  const a = w.a
  if (typeof s.$ref === 'string') {
    const target = resolve(a.root, s.$ref)
    return target ? strip(v, target, w, depth + 1) : v
  }
  if (Array.isArray(s.anyOf)) {
    const fits = s.anyOf.filter((b) => isObj(b) && shapeFits(v, b, w, depth + 1))
    return fits.length === 1 ? strip(v, fits[0] as Node, w, depth + 1) : v
  }
  if (Array.isArray(v) && isObj(s.items)) {
    const items = s.items
    const out = v.map((x) => strip(x, items, w, depth + 1))
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
    const y = Object.hasOwn(props, k) && isObj(props[k]) ? strip(x, props[k] as Node, w, depth + 1) : x
    changed ||= y !== x
    kept.push([k, y])
  }
  // (fromEntries: a `__proto__` key stays a key)
  return changed ? Object.fromEntries(kept) : v
}

const typeOf = (raw: unknown): string => {
  const v = plain(raw)
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v
}

/**
 * Whether `v` may be of branch `b`: its type, its enum or const, an object's keys and, in turn,
 * its properties' values. Never false for a value of the branch (past the depth it says true), so
 * that a branch found the only one that fits is the value's. Each branch is judged once a value.
 */
function shapeFits(v: unknown, b: Node, w: Walk, depth: number): boolean {
  if (depth > MAX_DEPTH) return true
  let known = w.fits.get(v)
  if (!known) w.fits.set(v, (known = new Map()))
  const was = known.get(b)
  if (was !== undefined) return was
  // a ref back to a branch being judged for the same value says nothing against it
  known.set(b, true)
  const out = shapeFitsHere(v, b, w, depth)
  known.set(b, out)
  return out
}

function shapeFitsHere(v: unknown, b: Node, w: Walk, depth: number): boolean {
  step(w)
  if (typeof b.$ref === 'string') {
    const target = resolve(w.a.root, b.$ref)
    return target !== undefined && shapeFits(v, target, w, depth + 1)
  }
  if (Array.isArray(b.anyOf)) return b.anyOf.some((x) => isObj(x) && shapeFits(v, x, w, depth + 1))
  const t = typeOf(v)
  if (b.type !== undefined) {
    const types = Array.isArray(b.type) ? b.type : [b.type]
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return false
  }
  if (Array.isArray(b.enum) && !b.enum.some((e) => same(e, v, w, 0))) return false
  if ('const' in b && !same(b.const, v, w, 0)) return false
  if (t !== 'object' || !isObj(b.properties)) return true
  const props = b.properties
  const names = Object.keys(props)
  const keys = Object.keys(v as Node)
  if (keys.length !== names.length || !keys.every((k) => Object.hasOwn(props, k))) return false
  return keys.every((k) => !isObj(props[k]) || shapeFits((v as Node)[k], props[k] as Node, w, depth + 1))
}

/** Whether two JSON values are equal (an object's keys in any order), as JSON Schema's enum and const compare them. */
function same(rx: unknown, ry: unknown, w: Walk, depth: number): boolean {
  const x = plain(rx)
  const y = plain(ry)
  if (x === y) return true
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null || Array.isArray(x) !== Array.isArray(y)) return false
  // a value past the depth is not told apart: the branch may be the value's
  if (depth > MAX_DEPTH) return true
  step(w)
  if (Array.isArray(x)) return x.length === (y as unknown[]).length && x.every((e, i) => same(e, (y as unknown[])[i], w, depth + 1))
  const kx = Object.keys(x)
  return kx.length === Object.keys(y).length && kx.every((k) => Object.hasOwn(y, k) && same((x as Node)[k], (y as Node)[k], w, depth + 1))
}
