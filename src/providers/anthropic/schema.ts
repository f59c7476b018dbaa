// A JSON schema as Claude's structured output takes it (`output_config.format`). Claude compiles
// the schema into its decoding, and refuses what it does not compile: numeric bounds (minimum,
// maximum, multipleOf), string lengths and patterns, array bounds past minItems 0 or 1, string
// formats outside a short list, objects open to more properties. An OpenAI client's schema (a
// zod `.min()`, `.max()`, `.int().min(0)`) holds them freely. What Claude does not take moves into
// the node's description, as `{minimum: 0, maxLength: 40}`: the model still reads the rule, and
// the request is not refused; each keyword moved is named. Pure.

/** The string formats Claude's structured output takes. */
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid'])

type Node = Record<string, unknown>

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v)
const primitive = (v: unknown) => v === null || typeof v !== 'object'

/** `schema` as Claude takes it, and the keywords moved into descriptions (sorted, once each). */
export function claudeSchema(schema: Record<string, unknown>): { schema: Record<string, unknown>; moved: string[] } {
  const moved = new Set<string>()
  const out = node(schema, moved)
  return { schema: isNode(out) ? out : schema, moved: [...moved].sort() }
}

function node(s: unknown, moved: Set<string>): unknown {
  if (!isNode(s)) return s
  const out: Node = {}
  const rest: Node = {}
  let oneOf: unknown
  for (const [k, v] of Object.entries(s)) {
    switch (k) {
      case '$defs':
      case 'definitions':
        out[k] = isNode(v) ? Object.fromEntries(Object.entries(v).map(([name, d]) => [name, node(d, moved)])) : v
        break
      case 'properties':
        out[k] = isNode(v) ? Object.fromEntries(Object.entries(v).map(([name, p]) => [name, node(p, moved)])) : v
        break
      case 'items':
        out[k] = Array.isArray(v) ? v.map((i) => node(i, moved)) : node(v, moved)
        break
      case 'anyOf':
      case 'allOf':
        out[k] = Array.isArray(v) ? v.map((b) => node(b, moved)) : v
        break
      // one of several branches: Claude takes anyOf, and a value meets both where the branches do
      // not overlap (beside an anyOf of its own, the two go in an allOf, so that neither is lost)
      case 'oneOf':
        oneOf = Array.isArray(v) ? v.map((b) => node(b, moved)) : v
        break
      case 'enum':
        if (Array.isArray(v) && v.every(primitive)) out[k] = v
        else rest[k] = v
        break
      case 'const':
        if (primitive(v)) out[k] = v
        else rest[k] = v
        break
      case 'format':
        if (typeof v === 'string' && FORMATS.has(v)) out[k] = v
        else rest[k] = v
        break
      case 'minItems':
        if (v === 0 || v === 1) out[k] = v
        else rest[k] = v
        break
      // an object takes no properties beyond its own: Claude's rule; what the schema said instead
      // (true, a schema for a map's values) is described
      case 'additionalProperties':
        if (v !== false) rest[k] = v
        break
      case '$ref':
        // a reference into a oneOf follows it to its anyOf
        out[k] = typeof v === 'string' && v.startsWith('#') ? v.replaceAll('/oneOf/', '/anyOf/') : v
        break
      case 'type':
      case 'required':
      case 'description':
      case 'title':
        out[k] = v
        break
      // the dialect's name constrains nothing
      case '$schema':
        break
      default:
        rest[k] = v
    }
  }
  if (oneOf !== undefined) {
    if (out.anyOf === undefined) out.anyOf = oneOf
    else {
      out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: out.anyOf }, { anyOf: oneOf }]
      delete out.anyOf
    }
  }
  if (out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object')) || isNode(out.properties)) out.additionalProperties = false
  const keys = Object.keys(rest)
  if (keys.length > 0) {
    for (const k of keys) moved.add(k)
    const rule = `{${keys.map((k) => `${k}: ${JSON.stringify(rest[k])}`).join(', ')}}`
    out.description = typeof out.description === 'string' && out.description !== '' ? `${out.description}\n\n${rule}` : rule
  }
  return out
}
