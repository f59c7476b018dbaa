// A value built from a JSON schema so that it validates: a forced tool call's arguments, and a
// reply held to a json_schema response format. Deterministic: the same schema, the same value.
// Strings are schema-strings.ts's (formats, patterns, lengths), numbers schema-numbers.ts's.
import { numberFor } from './schema-numbers.ts'
import { stringFor, type Chars } from './schema-strings.ts'

type Schema = Record<string, unknown>

/** Deeper than this, an object is given no properties and an array no items (a recursive schema ends). */
const MAX_DEPTH = 16
/**
 * The most values one example holds: a schema of nested `minItems` multiplies its counts level
 * by level, and an example past this would hold the loop and fill memory for one small request.
 * Past it, arrays are as short as what is left allows (short of their minItems).
 */
const MAX_VALUES = 10_000
/**
 * The most entries one example walks of a schema's lists and copies merging schemas: union
 * branches, `allOf` branches, `required` names, a `type` list, and what a merge copies (a `$ref`
 * with keywords beside it, a union's branch with its siblings, `allOf`). A schema is walked
 * anew wherever it is used (each item of an array, each property that refers to it), and
 * merges copy all before them: work that grew with the square of the schema's size held the
 * server's one thread for seconds (a 300 KB schema, 44 s). Past it, a ref is no longer followed
 * (its pointer is walked too), a branch is taken as it is, and those lists are no longer read.
 */
const MAX_WORK = 1_000_000
/** The most characters of strings one example holds (a pattern's, a padding's): past it, strings are plain. */
const MAX_CHARS = 200_000

/** What is left of one example's values, walking and characters. */
interface Budget extends Chars {
  left: number
  work: number
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
  return example(schema, schema, 0, { left: MAX_VALUES, work: MAX_WORK, chars: MAX_CHARS }, 0)
}

/** What merging a schema copies: its keywords, properties and required names. */
const weight = (s: Schema): number => Object.keys(s).length + (isObj(s.properties) ? Object.keys(s.properties).length : 0) + (Array.isArray(s.required) ? s.required.length : 0)

/** Whether `n` more entries may be walked (charged when they may). */
function spend(budget: Budget, n: number): boolean {
  if (budget.work <= 0) return false
  budget.work -= n
  return true
}

/** `a` and `b` merged, charged to the budget; undefined once it is spent (the caller takes one of them alone). */
function joined(a: Schema, b: Schema, budget: Budget): Schema | undefined {
  // (weighed only while the budget lasts: weighing walks them too)
  return budget.work > 0 && spend(budget, weight(a) + weight(b)) ? merge(a, b) : undefined
}

/** A list keyword of the schema, when the budget allows walking it. */
const list = (v: unknown, budget: Budget): unknown[] | undefined => (Array.isArray(v) && v.length > 0 && spend(budget, v.length) ? v : undefined)

/** Whether a schema says anything beside `key` (checked without listing its keywords). */
function besides(s: Schema, key: string): boolean {
  for (const k in s) if (k !== key) return true
  return false
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
  // (a pointer is read anew at each use: its length is walked too)
  if (depth < MAX_DEPTH && typeof s.$ref === 'string' && spend(budget, s.$ref.length)) {
    const ref = resolveRef(root, s.$ref)
    // a ref alone (the common case) is its target as it is: nothing to merge
    if (isObj(ref)) return example((besides(s, '$ref') && budget.work > 0 && joined(ref, without(s, '$ref'), budget)) || ref, root, depth + 1, budget, variant)
  }
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[variant % s.enum.length]
  if ('const' in s) return s.const
  const union = Array.isArray(s.anyOf) ? 'anyOf' : Array.isArray(s.oneOf) ? 'oneOf' : undefined
  const branches = union ? (list(s[union], budget) ?? []).filter(isObj) : []
  if (union && branches.length && depth < MAX_DEPTH) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0]!
    return example((besides(s, union) && budget.work > 0 && joined(without(s, union), branch, budget)) || branch, root, depth + 1, budget, variant)
  }
  const parts = list(s.allOf, budget)
  if (parts) {
    let all = s
    for (const b of parts) {
      const both = isObj(b) ? joined(all, b, budget) : all
      if (both === undefined) break
      all = both
    }
    s = without(all, 'allOf')
  }
  const type = Array.isArray(s.type) ? list(s.type, budget)?.find((t) => t !== 'null') : s.type
  switch (type ?? (isObj(s.properties) ? 'object' : s.items !== undefined || s.prefixItems !== undefined ? 'array' : undefined)) {
    case 'string':
      return stringFor(s, variant, budget)
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
  for (const k of list(s.required, budget) ?? []) {
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
