// A number or on/off value written as a string: `key_rpm: "60"`, or `port: ${PORT}` once the
// environment is expanded. Read as the number or boolean it spells where the schema takes one,
// with the same plain decimals the environment's variables take, so that the schema's bounds
// then hold for it too. A string that spells nothing stays a string, and the check names it.
import type { TSchema } from '@sinclair/typebox'

const DECIMAL = /^-?\d+(\.\d+)?$/
const SWITCH: Record<string, boolean> = { true: true, false: false }

interface Shape {
  type?: string
  const?: unknown
  anyOf?: Shape[]
  properties?: Record<string, Shape>
  patternProperties?: Record<string, Shape>
  additionalProperties?: Shape | boolean
  items?: Shape
}

/** `value` with its number and boolean strings read where `schema` takes numbers or booleans; a new value, the input untouched. */
export function numbersFromStrings(schema: TSchema, value: unknown): unknown {
  return read(schema as Shape, value)
}

function read(s: Shape, value: unknown): unknown {
  if (typeof value === 'string') {
    const branches = s.anyOf ?? [s]
    const types = branches.map((b) => b.type)
    // a string the schema takes as it is (any string, or one of its words: `retry_on: [timeout]`)
    if (branches.some((b) => b.type === 'string' && (b.const === undefined || b.const === value))) return value
    if ((types.includes('integer') || types.includes('number')) && DECIMAL.test(value.trim())) return Number(value)
    if (types.includes('boolean') && Object.hasOwn(SWITCH, value)) return SWITCH[value]
    return value
  }
  if (Array.isArray(value)) {
    const items = s.items ?? s.anyOf?.find((b) => b.type === 'array')?.items
    return items ? value.map((v) => read(items, v)) : value
  }
  if (value && typeof value === 'object') {
    const o = s.type === 'object' ? s : s.anyOf?.find((b) => b.type === 'object')
    if (!o) return value
    const rest = o.patternProperties ? Object.values(o.patternProperties)[0] : typeof o.additionalProperties === 'object' ? o.additionalProperties : undefined
    // own properties whatever their names (a `__proto__` key stays a key, for the check to name)
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => {
        const field = (o.properties && Object.hasOwn(o.properties, k) ? o.properties[k] : undefined) ?? rest
        return [k, field ? read(field, v) : v]
      }),
    )
  }
  return value
}
