// Arguments a forced tool call sends: built from the tool's JSON schema so they validate.
type Schema = Record<string, unknown>

/** string → enum[0] or "example"; number/integer → minimum or 0; boolean → false; array → []; object → its properties. */
export function exampleFromSchema(schema: unknown, depth = 0): unknown {
  const s = (schema && typeof schema === 'object' ? schema : {}) as Schema
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0]
  if ('const' in s) return s.const
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  switch (type) {
    case 'string':
      return 'example'
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 0
    case 'boolean':
      return false
    case 'array':
      return []
    case 'null':
      return null
    default: {
      const props = s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {}
      if (depth > 8) return {}
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, exampleFromSchema(v, depth + 1)]))
    }
  }
}
