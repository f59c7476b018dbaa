// A strict schema Anthropic takes, made to fit OpenAI's strict mode where that is faithful.
// Anthropic's strict mode lets a property be optional and an object be left without
// `additionalProperties`; OpenAI's wants every property in `required` and every object closed,
// and says to write an optional property as one that may be null. So: an optional property
// becomes required and nullable, and an object that said nothing of extra properties is closed.
// What the model then sends has nulls the client's schema never asked for; `added` says where,
// and strict-nulls.ts takes them out of its answer. A property the client's own schema lets be
// null is made required as it is: its null is meant, and stays.
//
// Annotations, which constrain nothing, are left out of the copy sent (the client's own schema is
// not touched): `default` (OpenAI refuses it: "'default' is not permitted"), `examples`,
// `$comment`, `deprecated`, `readOnly`, `writeOnly`, and the root's `$schema` and `$id` (zod 4's
// toJSONSchema writes `$schema` on every schema, the AI SDK keeps `default`). A `oneOf` whose
// branches are objects told apart by a const of one property they all require (a zod
// discriminated union) is an `anyOf`: no value can match two of them.
//
// What does not fit keeps today's fallback (sent without strict): a root that is not a plain
// object (a root anyOf), an object the client left open on purpose (additionalProperties true or
// a schema), a keyword outside OpenAI's documented subset (allOf, any other oneOf, not,
// if/then/else, patternProperties, minLength …), a `format` OpenAI does not list (uri), a schema
// node with no type, a `$ref` to anywhere but the root or a definition, more than 10 levels of
// objects or 5,000 properties (OpenAI's own limits), and a schema past this walk's bounds. Pure.
import { isObj } from '../lib/json.ts'

type Node = Record<string, unknown>

/** Where nulls were added: each fitted object node, by the properties made nullable in it. */
export interface AddedNulls {
  root: Node
  at: Map<Node, ReadonlySet<string>>
}

/** Keywords OpenAI's strict mode documents as taken; a node with any other does not fit. */
const TAKEN = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', '$ref', '$defs', 'definitions',
  'description', 'title', 'enum', 'const', 'pattern', 'format',
  'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems',
])
/** Annotations: they constrain nothing, and are left out of the copy sent. */
const ANNOTATIONS = new Set(['default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly'])
/** The root's own annotations, left out there only (a nested `$id` would move what its refs point at). */
const ROOT_ANNOTATIONS = ['$schema', '$id'] as const
/** The string formats OpenAI's strict mode lists; any other is refused ("'uri' is not a valid format"). */
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])
/** Types a `type: [T, "null"]` is written for (OpenAI's own example); any other is wrapped in anyOf. */
const PLAIN = new Set(['string', 'number', 'integer', 'boolean'])
/** OpenAI's limits: objects nested, and properties in all. */
const MOST_OBJECT_LEVELS = 10
const MOST_PROPERTIES = 5_000
/** This walk's own bounds, as refsAlone's (strict-refs.ts). */
const MAX_DEPTH = 64
const MOST_NODES = 20_000
const LOCAL_REF = /^#(?:\/(?:\$defs|definitions)\/[^/]+)?$/

interface Walk {
  root: Node
  added: Map<Node, ReadonlySet<string>>
  nodes: number
  properties: number
  /** Whether each node the client's schema may be null at was found so (nullable). */
  nulls: Map<Node, boolean>
}

/**
 * Where a fitted schema added nulls, by the schema object sent: the answer is read far from where
 * the request was built (the surface's encoder), and the IR tool has no field for it.
 */
const ADDED = new WeakMap<Node, AddedNulls>()

/** Where the fitted schema `sent` made the model send nulls the client's schema has no place for, if anywhere. */
export const addedNullsOf = (sent: unknown): AddedNulls | undefined => (isObj(sent) ? ADDED.get(sent) : undefined)

/** `schema` (with no keyword beside a `$ref`) fitted to OpenAI's strict mode; undefined where it cannot fit. */
export function fitStrict(client: Node): Node | undefined {
  if (client.type !== 'object' || client.anyOf !== undefined) return undefined
  const schema = { ...client }
  for (const k of ROOT_ANNOTATIONS) if (typeof schema[k] === 'string') delete schema[k]
  const w: Walk = { root: schema, added: new Map(), nodes: MOST_NODES, properties: 0, nulls: new Map() }
  const out = fit(schema, w, 0, 0)
  if (out && w.added.size > 0) ADDED.set(out, { root: out, at: w.added })
  return out
}

function fit(s: unknown, w: Walk, depth: number, levels: number): Node | undefined {
  if (!isObj(s) || depth > MAX_DEPTH || --w.nodes < 0) return undefined
  const u = unionOf(withoutAnnotations(s), w)
  if (!u || !Object.keys(u).every((k) => TAKEN.has(k))) return undefined
  if (typeof u.$ref === 'string') return LOCAL_REF.test(u.$ref) && Object.keys(u).length === 1 && resolve(w.root, u.$ref) ? u : undefined
  if (u.$ref !== undefined || !typed(u) || (u.format !== undefined && !FORMATS.has(u.format as string))) return undefined
  return fitTyped(u, w, depth, levels)
}

/** The node without its annotations (itself where it has none). */
function withoutAnnotations(s: Node): Node {
  if (!Object.keys(s).some((k) => ANNOTATIONS.has(k))) return s
  // (fromEntries: a `__proto__` keyword stays a key, and is then refused as no keyword taken)
  return Object.fromEntries(Object.entries(s).filter(([k]) => !ANNOTATIONS.has(k)))
}

/** The node with a `oneOf` no value can match two branches of written as an `anyOf`; undefined for any other oneOf. */
function unionOf(s: Node, w: Walk): Node | undefined {
  if (s.oneOf === undefined) return s
  if (s.anyOf !== undefined || !Array.isArray(s.oneOf) || !disjoint(s.oneOf, w)) return undefined
  const { oneOf, ...rest } = s
  return { ...rest, anyOf: oneOf }
}

/**
 * Whether no value can match two of `branches`: each an object (or a ref to one) requiring one
 * same property, whose value each fixes to a const (or a one-value enum) of its own.
 */
function disjoint(branches: unknown[], w: Walk): boolean {
  const objects = branches.map((b) => (isObj(b) && typeof b.$ref === 'string' ? resolve(w.root, b.$ref) : b))
  if (objects.length < 2 || !objects.every((o) => isObj(o) && o.type === 'object' && isObj(o.properties) && Array.isArray(o.required))) return false
  const nodes = objects as Node[]
  const first = nodes[0]!.required as unknown[]
  return first.some((name) => {
    if (typeof name !== 'string') return false
    const fixed = nodes.map((o) => (o.required as unknown[]).includes(name) && Object.hasOwn(o.properties as Node, name) ? fixedValue((o.properties as Node)[name]) : undefined)
    if (fixed.some((v) => v === undefined)) return false
    return new Set(fixed.map((v) => JSON.stringify(v))).size === fixed.length
  })
}

/** The one value a property's schema allows (its const, a one-value enum), as a box; undefined if none. */
function fixedValue(p: unknown): { v: unknown } | undefined {
  if (!isObj(p)) return undefined
  if ('const' in p && (p.const === null || typeof p.const !== 'object')) return { v: p.const }
  if (Array.isArray(p.enum) && p.enum.length === 1 && (p.enum[0] === null || typeof p.enum[0] !== 'object')) return { v: p.enum[0] }
  return undefined
}

function fitTyped(s: Node, w: Walk, depth: number, levels: number): Node | undefined {
  const out: Node = { ...s }
  if (s.anyOf !== undefined) {
    if (!Array.isArray(s.anyOf) || s.anyOf.length === 0) return undefined
    const branches = s.anyOf.map((b) => fit(b, w, depth + 1, levels))
    if (branches.some((b) => b === undefined)) return undefined
    out.anyOf = branches
  }
  if (s.items !== undefined) {
    const items = fit(s.items, w, depth + 1, levels)
    if (!items) return undefined
    out.items = items
  }
  for (const k of ['$defs', 'definitions'] as const) {
    if (s[k] === undefined) continue
    if (!isObj(s[k])) return undefined
    const defs: [string, Node | undefined][] = Object.entries(s[k]).map(([name, d]) => [name, fit(d, w, depth + 1, 0)])
    if (defs.some(([, d]) => d === undefined)) return undefined
    out[k] = Object.fromEntries(defs)
  }
  if (s.type === 'object' || s.properties !== undefined || s.required !== undefined || s.additionalProperties !== undefined) return closed(s, out, w, depth, levels + 1)
  return out
}

/** A node says what it is: a known type (or list of them), an enum, a const, an anyOf. */
function typed(s: Node): boolean {
  if (s.type === undefined) return s.enum !== undefined || 'const' in s || s.anyOf !== undefined
  const types = Array.isArray(s.type) ? s.type : [s.type]
  // a list holding object or array alongside another type is not a shape this fits
  if (types.length === 0 || !types.every((t) => typeof t === 'string' && TYPES.has(t))) return false
  return types.length === 1 || types.every((t) => PLAIN.has(t) || t === 'null')
}

/** An object: closed, every property required, each optional one nullable (noted in `added`). */
function closed(s: Node, out: Node, w: Walk, depth: number, levels: number): Node | undefined {
  if (s.type !== 'object' || levels > MOST_OBJECT_LEVELS) return undefined
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) return undefined
  const props = s.properties ?? {}
  if (!isObj(props)) return undefined
  const names = Object.keys(props)
  w.properties += names.length
  if (w.properties > MOST_PROPERTIES) return undefined
  const required = s.required ?? []
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string' && Object.hasOwn(props, r))) return undefined
  const wanted = new Set(required)
  const added = new Set<string>()
  const fitted: [string, Node][] = []
  for (const name of names) {
    const p = fit(props[name], w, depth + 1, levels)
    if (!p) return undefined
    if (wanted.has(name) || nullable(props[name] as Node, w, 0)) fitted.push([name, p])
    else {
      fitted.push([name, orNull(p)])
      added.add(name)
    }
  }
  // (fromEntries: a `__proto__` property name stays a property)
  const obj: Node = { ...out, properties: Object.fromEntries(fitted), required: names, additionalProperties: false }
  if (added.size > 0) w.added.set(obj, added)
  return obj
}

/**
 * Whether the client's own schema lets the value be null (every keyword of the node must). Each
 * node is judged once a walk (`w.nulls`): definitions whose unions name each other would
 * otherwise be walked once a path, twice as many with each definition. A node met again while it
 * is being judged (a ref back into itself) is taken as not null there, so a definition nullable
 * only by way of such a loop may be judged not nullable: its optional property's null is then
 * taken out of the answer, which the client's schema allows all the same.
 */
function nullable(s: Node, w: Walk, depth: number): boolean {
  const known = w.nulls.get(s)
  if (known !== undefined) return known
  if (depth > MAX_DEPTH) return false
  w.nulls.set(s, false)
  const out = nullableHere(s, w, depth)
  w.nulls.set(s, out)
  return out
}

function nullableHere(s: Node, w: Walk, depth: number): boolean {
  if (s.type !== undefined && !(s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null')))) return false
  if (s.enum !== undefined && !(Array.isArray(s.enum) && s.enum.includes(null))) return false
  if ('const' in s && s.const !== null) return false
  for (const k of ['anyOf', 'oneOf'] as const) {
    const branches = s[k]
    if (Array.isArray(branches) && !branches.some((b) => isObj(b) && nullable(b, w, depth + 1))) return false
  }
  if (typeof s.$ref === 'string') {
    const target = resolve(w.root, s.$ref)
    if (!target || !nullable(target, w, depth + 1)) return false
  }
  return true
}

/** The node, or null: `[T, "null"]` for a plain type, else one more anyOf branch. */
function orNull(p: Node): Node {
  const NULL = { type: 'null' }
  if (Array.isArray(p.anyOf)) return { ...p, anyOf: [...p.anyOf, NULL] }
  const plain = p.enum === undefined && !('const' in p) && p.$ref === undefined
  if (plain && typeof p.type === 'string' && PLAIN.has(p.type)) return { ...p, type: [p.type, 'null'] }
  if (plain && Array.isArray(p.type)) return { ...p, type: [...p.type, 'null'] }
  return { anyOf: [p, NULL] }
}

/** The definition a local ref (`#`, `#/$defs/x`, `#/definitions/x`) names, if any. */
export function resolve(root: Node, ref: string): Node | undefined {
  if (ref === '#') return root
  const m = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref)
  if (!m) return undefined
  const defs = root[m[1]!]
  const name = m[2]!.replaceAll('~1', '/').replaceAll('~0', '~')
  return isObj(defs) && Object.hasOwn(defs, name) && isObj(defs[name]) ? defs[name] : undefined
}
