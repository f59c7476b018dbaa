// A value built from a JSON schema so that it validates: a forced tool call's arguments, and a
// reply held to a json_schema response format. Deterministic: the same schema, the same value.
type Schema = Record<string, unknown>

/** Deeper than this, an object is given no properties and an array no items (a recursive schema ends). */
const MAX_DEPTH = 16
/**
 * The most values one example holds, and the most characters a string is padded to: a schema
 * of nested `minItems` multiplies its counts level by level, and an example past these would
 * hold the loop and fill memory for one small request. Past them, arrays and strings are as
 * short as what is left allows.
 */
const MAX_VALUES = 10_000
const MAX_PAD = 1_000

/** What is left of one example's values. */
interface Budget {
  left: number
}

const FORMATS: Record<string, string> = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  hostname: 'example.com',
}

const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * enum → its first value; const → itself; string → "example" (or its format's example), as long
 * as minLength asks; number/integer → the least its bounds allow, or 0; boolean → false;
 * array → minItems items; object → its properties; a local `$ref` is followed, `anyOf`/`oneOf`
 * take their first branch that is not null, `allOf` its branches together.
 */
export function exampleFromSchema(schema: unknown): unknown {
  return example(schema, schema, 0, { left: MAX_VALUES })
}

function example(schema: unknown, root: unknown, depth: number, budget: Budget): unknown {
  budget.left--
  let s: Schema = isObj(schema) ? schema : {}
  const ref = typeof s.$ref === 'string' ? resolveRef(root, s.$ref) : undefined
  if (ref && depth < MAX_DEPTH) return example(ref, root, depth + 1, budget)
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0]
  if ('const' in s) return s.const
  const branches = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined)?.filter(isObj)
  if (branches?.length && depth < MAX_DEPTH) return example(branches.find((b) => b.type !== 'null') ?? branches[0], root, depth + 1, budget)
  if (Array.isArray(s.allOf) && s.allOf.length) {
    const parts = s.allOf.filter(isObj)
    const properties = Object.assign({}, ...parts.map((b) => (isObj(b.properties) ? b.properties : {})), isObj(s.properties) ? s.properties : {})
    s = { ...Object.assign({}, ...parts), ...s, allOf: undefined, properties }
  }
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  switch (type ?? (isObj(s.properties) ? 'object' : s.items !== undefined ? 'array' : undefined)) {
    case 'string':
      return stringFor(s)
    case 'number':
    case 'integer':
      return numberFor(s, type === 'integer')
    case 'boolean':
      return false
    case 'array': {
      const n = typeof s.minItems === 'number' && s.minItems > 0 && depth < MAX_DEPTH ? Math.min(s.minItems, 64) : 0
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : []
      const out: unknown[] = []
      for (let i = 0; i < Math.max(n, depth < MAX_DEPTH ? prefix.length : 0) && budget.left > 0; i++) out.push(example(prefix[i] ?? s.items, root, depth + 1, budget))
      return out
    }
    case 'null':
      return null
    default: {
      const props = isObj(s.properties) ? s.properties : {}
      if (depth >= MAX_DEPTH || budget.left <= 0) return {}
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, example(v, root, depth + 1, budget)]))
    }
  }
}

/** `#/$defs/Name` (or any JSON pointer into the root schema). */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined
  let at: unknown = root
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (!isObj(at) || !Object.hasOwn(at, key)) return undefined
    at = at[key]
  }
  return at
}

function stringFor(s: Schema): string {
  let out = (typeof s.format === 'string' && Object.hasOwn(FORMATS, s.format) && FORMATS[s.format]) || 'example'
  const min = typeof s.minLength === 'number' ? s.minLength : 0
  if (out.length < min) out = out + 'x'.repeat(Math.max(0, Math.min(min, MAX_PAD) - out.length))
  if (typeof s.maxLength === 'number' && out.length > s.maxLength) out = out.slice(0, Math.max(0, s.maxLength))
  return out
}

function numberFor(s: Schema, integer: boolean): number {
  let n = 0
  if (typeof s.minimum === 'number') n = s.minimum
  else if (typeof s.exclusiveMinimum === 'number') n = integer ? Math.floor(s.exclusiveMinimum) + 1 : s.exclusiveMinimum + 1
  else if (typeof s.maximum === 'number' && s.maximum < 0) n = s.maximum
  else if (typeof s.exclusiveMaximum === 'number' && s.exclusiveMaximum <= 0) n = integer ? Math.ceil(s.exclusiveMaximum) - 1 : s.exclusiveMaximum - 1
  return integer ? Math.ceil(n) : n
}
