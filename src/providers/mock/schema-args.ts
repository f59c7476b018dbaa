// A value built from a JSON schema so that it validates: a forced tool call's arguments, and a
// reply held to a json_schema response format. Deterministic: the same schema, the same value.
// Strings are schema-strings.ts's (formats, patterns, lengths), numbers schema-numbers.ts's.
import { numberFor } from './schema-numbers.ts'
import { stringFor } from './schema-strings.ts'

type Schema = Record<string, unknown>

/** Deeper than this, an object is given no properties and an array no items (a recursive schema ends). */
const MAX_DEPTH = 16
/**
 * The most values one example holds: a schema of nested `minItems` multiplies its counts level
 * by level, and an example past this would hold the loop and fill memory for one small request.
 * Past it, arrays are as short as what is left allows (short of their minItems).
 */
const MAX_VALUES = 10_000

/** What is left of one example's values. */
interface Budget {
  left: number
}

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.floor(v)) : undefined)

/**
 * enum → its first value; const → itself; string → its format's example, its pattern's, or
 * "example", as long as minLength asks and maxLength allows; number/integer → the least its
 * bounds and multipleOf allow, or 0; boolean → false; array → minItems items (no more than
 * maxItems), each different when uniqueItems asks; object → its properties and its required
 * names; a local `$ref` is followed, `anyOf`/`oneOf` take their first branch that is not null,
 * `allOf` its branches together, each with the keywords beside them.
 */
export function exampleFromSchema(schema: unknown): unknown {
  return example(schema, schema, 0, { left: MAX_VALUES }, 0)
}

/** Two schemas as one: the second's keywords over the first's, their properties and required names joined. */
function merge(a: Schema, b: Schema): Schema {
  const out = { ...a, ...b }
  if (isObj(a.properties) || isObj(b.properties)) out.properties = { ...(isObj(a.properties) ? a.properties : {}), ...(isObj(b.properties) ? b.properties : {}) }
  if (Array.isArray(a.required) || Array.isArray(b.required)) out.required = [...new Set([...(Array.isArray(a.required) ? a.required : []), ...(Array.isArray(b.required) ? b.required : [])])]
  return out
}

const without = (s: Schema, key: string): Schema => {
  const { [key]: _, ...rest } = s
  return rest
}

/** `variant` asks for the variant-th distinct value the schema allows (0: the plain example). */
function example(schema: unknown, root: unknown, depth: number, budget: Budget, variant: number): unknown {
  budget.left--
  let s: Schema = isObj(schema) ? schema : {}
  if (depth < MAX_DEPTH && typeof s.$ref === 'string') {
    const ref = resolveRef(root, s.$ref)
    if (isObj(ref)) return example(merge(ref, without(s, '$ref')), root, depth + 1, budget, variant)
  }
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[variant % s.enum.length]
  if ('const' in s) return s.const
  const union = Array.isArray(s.anyOf) ? 'anyOf' : Array.isArray(s.oneOf) ? 'oneOf' : undefined
  const branches = union ? (s[union] as unknown[]).filter(isObj) : []
  if (union && branches.length && depth < MAX_DEPTH) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0]!
    return example(merge(without(s, union), branch), root, depth + 1, budget, variant)
  }
  if (Array.isArray(s.allOf) && s.allOf.length) s = without(s.allOf.filter(isObj).reduce(merge, s), 'allOf')
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  switch (type ?? (isObj(s.properties) ? 'object' : s.items !== undefined || s.prefixItems !== undefined ? 'array' : undefined)) {
    case 'string':
      return stringFor(s, variant)
    case 'number':
    case 'integer':
      return numberFor(s, type === 'integer', variant)
    case 'boolean':
      return variant % 2 === 1
    case 'array':
      return arrayFor(s, root, depth, budget, variant)
    case 'null':
      return null
    default:
      return objectFor(s, root, depth, budget, variant)
  }
}

function arrayFor(s: Schema, root: unknown, depth: number, budget: Budget, variant: number): unknown[] {
  if (depth >= MAX_DEPTH) return []
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : []
  const max = count(s.maxItems) ?? Infinity
  const n = Math.min(Math.max(count(s.minItems) ?? 0, prefix.length), max, MAX_VALUES)
  // distinct items where asked: the i-th item the i-th variant (past the array's own)
  const unique = s.uniqueItems === true
  const out: unknown[] = []
  for (let i = 0; i < n && budget.left > 0; i++) out.push(example(i < prefix.length ? prefix[i] : s.items, root, depth + 1, budget, unique ? variant + i : variant))
  return out
}

function objectFor(s: Schema, root: unknown, depth: number, budget: Budget, variant: number): Record<string, unknown> {
  if (depth >= MAX_DEPTH || budget.left <= 0) return {}
  const props = isObj(s.properties) ? s.properties : {}
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(props)) out[k] = example(v, root, depth + 1, budget, variant)
  // a required name no property describes: a value of the additional properties' schema
  const extra = isObj(s.additionalProperties) ? s.additionalProperties : {}
  for (const k of Array.isArray(s.required) ? s.required : []) {
    if (typeof k === 'string' && !Object.hasOwn(out, k) && budget.left > 0) out[k] = example(extra, root, depth + 1, budget, variant)
  }
  return out
}

/** `#/$defs/Name` (or any JSON pointer into the root schema). */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined
  let at: unknown = root
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = unescapeUri(raw).replaceAll('~1', '/').replaceAll('~0', '~')
    if (!isObj(at) || !Object.hasOwn(at, key)) return undefined
    at = at[key]
  }
  return at
}

/** A pointer's %-escapes decoded (a malformed one left as written). */
function unescapeUri(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
