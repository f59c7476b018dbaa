// A JSON schema as Claude's structured output takes it: what Claude compiles stays, the rest
// moves into descriptions, nothing the schema says is lost, and the client's schema is untouched.
import { expect, test } from 'bun:test'
import { claudeSchema } from '../../src/providers/anthropic/schema.ts'

test('oneOf becomes anyOf, beside an anyOf of its own in an allOf, and references into it follow', () => {
  expect(claudeSchema({ anyOf: [{ type: 'string' }], oneOf: [{ type: 'integer' }] }).schema).toEqual({ allOf: [{ anyOf: [{ type: 'string' }] }, { anyOf: [{ type: 'integer' }] }] })
  const s = claudeSchema({ type: 'object', properties: { a: { oneOf: [{ type: 'string' }, { type: 'integer' }] }, b: { $ref: '#/properties/a/oneOf/1' } } }).schema as any
  expect(s.properties.a).toEqual({ anyOf: [{ type: 'string' }, { type: 'integer' }] })
  expect(s.properties.b).toEqual({ $ref: '#/properties/a/anyOf/1' })
})

test("a map's value schema (additionalProperties) is described, not dropped; every object is closed", () => {
  const { schema, moved } = claudeSchema({ type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'number' } } }, required: ['m'] })
  expect(schema).toEqual({
    type: 'object',
    properties: { m: { type: 'object', additionalProperties: false, description: '{additionalProperties: {"type":"number"}}' } },
    required: ['m'],
    additionalProperties: false,
  })
  expect(moved).toEqual(['additionalProperties'])
})

test("what Claude takes goes as it came: $defs and references, type lists, enums, formats it knows, minItems 0 or 1; the client's object is not changed", () => {
  const input = {
    $defs: { Unit: { type: 'string', enum: ['c', 'f'] } },
    type: 'object',
    properties: { unit: { $ref: '#/$defs/Unit' }, at: { type: ['string', 'null'], format: 'date' }, tags: { type: 'array', items: { type: 'string' }, minItems: 1 } },
    required: ['unit', 'at', 'tags'],
    additionalProperties: false,
  }
  const copy = structuredClone(input)
  const { schema, moved } = claudeSchema(input)
  expect(schema).toEqual({ ...copy, $defs: { Unit: { type: 'string', enum: ['c', 'f'] } } })
  expect(moved).toEqual([])
  expect(input).toEqual(copy)
})
