// A schema Anthropic takes, as OpenAI's strict mode takes its `$ref`s: alone. Anthropic reads a
// keyword beside a `$ref` (the Anthropic SDK's output format helpers keep a field's description
// there from 1.17 on: a definition used twice, an optional field under zod 4.3), and OpenAI refuses
// the whole request for it ("$ref cannot have keywords {'description'}"). Such a node becomes its
// definition written out, the keywords beside the ref over the definition's own, so the field's
// description still reaches the model. A definition already being written out above it (a recursive
// schema), one past the budget, or a ref that leads nowhere keeps its `$ref` alone, and what was
// beside it is dropped (the definition's own description stays). Pure.
import { isObj } from '../lib/json.ts'

type Node = Record<string, unknown>

/** Definitions written out in one schema at most: a chain of described uses doubles at each level. */
const MOST_WRITTEN_OUT = 64
/**
 * Nodes the written-out copies may hold in all: each copy is its definition again, so 64 copies
 * of a large one would multiply the body sent upstream. Past it, refs stay bare.
 */
const MOST_COPIED_NODES = 20_000
/** How deep the walk goes; deeper nodes are left as they are. */
const MAX_DEPTH = 64

/** Where a keyword holds subschemas: one, a list of them, a map of them, or one or a list (`items`). */
const SUBSCHEMAS: Record<string, 'one' | 'list' | 'map' | 'oneOrList'> = {
  properties: 'map', patternProperties: 'map', $defs: 'map', definitions: 'map', dependentSchemas: 'map',
  items: 'oneOrList', prefixItems: 'list', anyOf: 'list', allOf: 'list', oneOf: 'list',
  additionalProperties: 'one', not: 'one', if: 'one', then: 'one', else: 'one', contains: 'one',
}

interface Walk {
  root: Node
  /** Definitions that may still be written out, and nodes their copies may still hold. */
  budget: { left: number; nodes: number }
}

/** `schema` with no keyword beside any `$ref`, as a copy of its subschemas. */
export function refsAlone(schema: Node): Node {
  const out = node(schema, { root: schema, budget: { left: MOST_WRITTEN_OUT, nodes: MOST_COPIED_NODES } }, [], 0)
  return isObj(out) ? out : schema
}

/** The node a local ref (`#/$defs/address`) points at, if any. */
function resolve(root: Node, ref: string): Node | undefined {
  if (!ref.startsWith('#/')) return ref === '#' ? root : undefined
  let at: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (!isObj(at) && !Array.isArray(at)) return undefined
    at = Object.hasOwn(at, key) ? (at as Node)[key] : undefined
  }
  return isObj(at) ? at : undefined
}

function node(s: unknown, w: Walk, open: string[], depth: number): unknown {
  if (!isObj(s) || depth > MAX_DEPTH) return s
  // a node inside a written-out copy is a new one
  if (open.length > 0) w.budget.nodes--
  const ref = s.$ref
  if (typeof ref === 'string' && Object.keys(s).length > 1) {
    const { $ref: _, ...beside } = s
    const target = open.includes(ref) || w.budget.left <= 0 || w.budget.nodes <= 0 ? undefined : resolve(w.root, ref)
    if (!target) return { $ref: ref }
    w.budget.left--
    return node({ ...target, ...beside }, w, [...open, ref], depth + 1)
  }
  // (fromEntries: a `__proto__` property name stays a property, as JSON.parse made it)
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, sub(Object.hasOwn(SUBSCHEMAS, k) ? SUBSCHEMAS[k] : undefined, v, w, open, depth + 1)]))
}

function sub(kind: (typeof SUBSCHEMAS)[string] | undefined, v: unknown, w: Walk, open: string[], depth: number): unknown {
  if (kind === undefined) return v
  const each = (x: unknown) => node(x, w, open, depth)
  if (kind === 'map') return isObj(v) ? Object.fromEntries(Object.entries(v).map(([name, x]) => [name, each(x)])) : v
  if (kind === 'list') return Array.isArray(v) ? v.map(each) : v
  if (kind === 'oneOrList') return Array.isArray(v) ? v.map(each) : each(v)
  return each(v)
}
