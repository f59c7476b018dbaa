// The schemas real clients send for a Claude strict tool or structured output, as OpenAI's strict
// mode is to take them: @anthropic-ai/sdk 1.17's helpers over zod 4 (the fixture, generated from
// the real libraries). zod 4 writes `$schema` on every schema and a discriminated union as a
// `oneOf`; a `.default()` or `.meta({ examples })` writes annotations OpenAI refuses ("'default' is
// not permitted"). Annotations are left out of the copy sent and strict kept; a string length or a
// format OpenAI does not list (uri) keeps the fallback.
import { describe, expect, test } from 'bun:test'
import { fixtureJson } from '../helpers/fake-upstream.ts'
import { strictFor } from '../../src/routing/translate.ts'
import { addedNullsOf, fitStrict } from '../../src/routing/strict-fit.ts'
import { withoutAddedNulls } from '../../src/routing/strict-nulls.ts'

const schemas = fixtureJson('anthropic/sdk-zod4-schemas.generated.json')
const KINDS = ['tool', 'format', 'standardInput'] as const
const cases = Object.keys(schemas).filter((k) => !k.startsWith('_'))

/** Keywords OpenAI's Structured Outputs guide lists, and the string formats it lists. */
const DOCUMENTED = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', '$ref', '$defs', 'definitions', 'description', 'title', 'enum', 'const', 'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems'])
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])
/** Every keyword of every schema node (property names and definition names are no keywords). */
function keywords(s: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(s)) s.forEach((x) => keywords(x, out))
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return out
  const o = s as Record<string, unknown>
  for (const k of Object.keys(o)) out.add(k === 'format' ? `format:${o.format}` : k)
  for (const k of ['properties', '$defs', 'definitions']) if (o[k]) Object.values(o[k] as object).forEach((x) => keywords(x, out))
  for (const k of ['items', 'anyOf']) if (o[k]) keywords(o[k], out)
  return out
}
const refused = (s: unknown) => [...keywords(s)].filter((k) => (k.startsWith('format:') ? !FORMATS.has(k.slice(7)) : !DOCUMENTED.has(k)))

describe("the Anthropic SDK's zod 4 schemas, for OpenAI's strict mode", () => {
  for (const name of cases) {
    for (const kind of KINDS) {
      const keeps = name !== 'lengths'
      test(`${name}, as ${kind}: ${keeps ? 'strict kept, nothing OpenAI refuses sent' : 'sent without strict'}`, () => {
        const { schema, strict } = strictFor(schemas[name][kind])
        expect(strict).toBe(keeps)
        if (keeps) expect(refused(schema)).toEqual([])
      })
    }
  }

  test('$schema at the root, default and examples are left out of the copy sent; the client\'s schema keeps them', () => {
    const client = schemas.defaults.tool
    const { schema } = strictFor(client)
    expect(schema).toEqual({
      type: 'object',
      properties: {
        unit: { type: 'string', enum: ['c', 'f'] },
        days: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
        note: { type: ['string', 'null'], description: 'a note' },
      },
      required: ['unit', 'days', 'note'],
      additionalProperties: false,
    })
    expect(client.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(client.properties.unit.default).toBe('c')
  })

  test('a discriminated union (oneOf told apart by a const) goes as anyOf, and the optional field of its branch loses its null in the answer', () => {
    const { schema } = strictFor(schemas.unions.tool)
    const shape = (schema.properties as any).shape
    expect(shape.oneOf).toBeUndefined()
    expect(shape.anyOf.map((b: any) => b.properties.kind.const)).toEqual(['circle', 'square'])
    const added = addedNullsOf(schema)!
    const answer = { value: 2, shape: { kind: 'square', side: 3, label: null } }
    expect(JSON.parse(withoutAddedNulls(JSON.stringify(answer), added))).toEqual({ value: 2, shape: { kind: 'square', side: 3 } })
  })

  test('a string length (not in the documented subset) and a format OpenAI does not list keep the fallback', () => {
    const obj = (p: object) => ({ type: 'object', properties: { a: p }, required: ['a'], additionalProperties: false })
    expect(fitStrict(obj({ type: 'string', minLength: 1 }))).toBeUndefined()
    expect(fitStrict(obj({ type: 'string', format: 'uri' }))).toBeUndefined()
    expect(fitStrict(obj({ type: 'string', format: 'uuid' }))).toBeDefined()
    // a schema that fits as it is is held to the same subset
    expect(strictFor(obj({ type: 'string', format: 'uri' })).strict).toBe(false)
  })

  test('a oneOf whose branches may both match stays refused: no const of a property all of them require', () => {
    const branch = (kind: object) => ({ type: 'object', properties: { kind, n: { type: 'number' } }, required: ['kind', 'n'], additionalProperties: false })
    const obj = (u: object) => ({ type: 'object', properties: { u }, required: ['u'], additionalProperties: false })
    expect(fitStrict(obj({ oneOf: [branch({ const: 'a' }), branch({ const: 'a' })] }))).toBeUndefined()
    expect(fitStrict(obj({ oneOf: [branch({ const: 'a' }), branch({ type: 'string' })] }))).toBeUndefined()
    expect(fitStrict(obj({ oneOf: [branch({ const: 'a' }), { type: 'string' }] }))).toBeUndefined()
    expect(fitStrict(obj({ oneOf: [branch({ const: 'a' }), branch({ enum: ['b'] })] }))).toBeDefined()
  })

  test('a property named like an annotation (default) stays a property', () => {
    const s = { type: 'object', properties: { default: { type: 'string', default: 'x' } }, required: ['default'], additionalProperties: false }
    expect(fitStrict(s)).toEqual({ type: 'object', properties: { default: { type: 'string' } }, required: ['default'], additionalProperties: false })
  })

  test('a nested $id (which moves what refs under it point at) keeps the fallback', () => {
    const s = { type: 'object', properties: { a: { $id: 'x', type: 'string' } }, required: ['a'], additionalProperties: false }
    expect(fitStrict(s)).toBeUndefined()
  })
})
