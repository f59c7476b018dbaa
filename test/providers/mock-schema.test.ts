// The mock's values built from a schema validate against it for the constraints clients check:
// a client that validates the reply (the SDKs' parse(), a zod schema, a JSON-schema validator)
// takes the mock's example where it took a real model's. Checked by schema-check.ts.
import { describe, expect, test } from 'bun:test'
import { exampleFromSchema } from '../../src/providers/mock/schema-args.ts'
import { patternExample } from '../../src/providers/mock/pattern.ts'
import { check } from './schema-check.ts'

const valid = (schema: Record<string, unknown>) => {
  const v = exampleFromSchema(schema)
  expect(check(v, schema)).toEqual([])
  return v
}

describe('numbers', () => {
  test('multipleOf, with bounds, exclusive bounds and integers', () => {
    expect(valid({ type: 'integer', multipleOf: 5, minimum: 12 })).toBe(15)
    expect(valid({ type: 'number', multipleOf: 0.1, minimum: 0.25 })).toBe(0.4)
    expect(valid({ type: 'number', multipleOf: 0.01, exclusiveMinimum: 0 })).toBe(0.01)
    expect(valid({ type: 'integer', multipleOf: 3, maximum: -1 })).toBe(-3)
    expect(valid({ type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0.5 })).toBeGreaterThan(0)
    expect(valid({ type: 'integer', exclusiveMinimum: 2.5, maximum: 10 })).toBe(3)
    // draft 4's boolean exclusives
    expect(valid({ type: 'integer', minimum: 0, exclusiveMinimum: true })).toBe(1)
    expect(valid({ type: 'integer', multipleOf: 0.5, minimum: 0.7 })).toBe(1)
  })
})

describe('strings', () => {
  test('formats: date-time, date, time, email, uuid, uri, ipv4', () => {
    for (const format of ['date-time', 'date', 'time', 'email', 'uuid', 'uri', 'ipv4']) valid({ type: 'string', format })
  })

  test('minLength and maxLength together', () => {
    expect(valid({ type: 'string', minLength: 3, maxLength: 4 })).toBe('exam')
    expect(valid({ type: 'string', minLength: 12 })).toBe('examplexxxxx')
  })

  test('patterns of the common shapes: classes, quantifiers, groups, alternation, anchors', () => {
    const patterns = [
      '^[A-Z]{3}-\\d{4}$',
      '^[a-z0-9_]+$',
      '^\\+?[1-9]\\d{1,14}$',
      '^(foo|bar)-[0-9]+$',
      '^#[0-9a-fA-F]{6}$',
      '^sk-[A-Za-z0-9]{20,}$',
      'abc',
      '^prefix',
      'suffix$',
      '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$',
      '^\\d{3}(?:\\.\\d{3})*$',
      '^(?<year>\\d{4})-(?<month>0[1-9]|1[0-2])$',
      '^[\\w.-]+$',
      '^v\\d+\\.\\d+\\.\\d+(-[a-z]+)?$',
      '^\\u0041[\\x42-\\x43]$',
      '^[cC][^\\s-]{8,}$',
    ]
    for (const pattern of patterns) valid({ type: 'string', pattern })
    expect(valid({ type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' })).toBe('AAA-0000')
    // minLength reached by repeating what the pattern lets repeat, or by padding an open end
    expect(valid({ type: 'string', pattern: '^[a-z]+$', minLength: 10 })).toBe('aaaaaaaaaa')
    expect(valid({ type: 'string', pattern: '^id-', minLength: 8 })).toBe('id-xxxxx')
  })

  test('a pattern beyond the subset (lookaround, back-reference, \\b) gives the plain example, and never runs the regex', () => {
    for (const pattern of ['^(?=.*\\d)\\w+$', '^(a)\\1$', '\\bword\\b', '^\\p{L}+$', '(a+)+$(']) {
      expect(patternExample(pattern, 0, Infinity, 0)).toBeUndefined()
      expect(exampleFromSchema({ type: 'string', pattern })).toBe('example')
    }
  })

  test('a hostile pattern is bounded: a huge count, an empty part repeated, deep nesting', () => {
    expect(patternExample('^a{1000000000}$', 0, Infinity, 0)).toBeUndefined()
    expect(patternExample('^(?:){1000000000}b$', 0, Infinity, 0)).toBeUndefined()
    expect(patternExample('('.repeat(5000) + ')'.repeat(5000), 0, Infinity, 0)).toBeUndefined()
    expect(patternExample('^a+$', 1_000, Infinity, 0)).toBe('a'.repeat(1_000))
  })
})

describe('arrays', () => {
  test('uniqueItems gives distinct items of every kind; maxItems is kept', () => {
    const kinds = [
      { type: 'integer', minimum: 1 },
      { type: 'number', multipleOf: 0.5 },
      { type: 'string' },
      { type: 'string', format: 'email' },
      { type: 'string', format: 'date' },
      { type: 'string', format: 'uuid' },
      { type: 'string', pattern: '^[A-Z]{2}$' },
      { type: 'string', enum: ['a', 'b', 'c'] },
      { type: 'object', properties: { id: { type: 'integer' }, tag: { type: 'string', maxLength: 3 } }, required: ['id', 'tag'] },
      { type: 'array', items: { type: 'integer' }, minItems: 1 },
    ]
    for (const items of kinds) expect((valid({ type: 'array', items, minItems: 3, uniqueItems: true }) as unknown[]).length).toBe(3)
    expect(valid({ type: 'array', items: { type: 'boolean' }, minItems: 2, uniqueItems: true })).toEqual([false, true])
    expect(valid({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }, { type: 'boolean' }], maxItems: 2 })).toEqual(['example', 0])
  })

  test('minItems past 64 is met (the budget of values, not a count, bounds it)', () => {
    expect((valid({ type: 'array', items: { type: 'integer' }, minItems: 200 }) as unknown[]).length).toBe(200)
  })
})

describe('objects, refs and unions', () => {
  test('$ref with keywords beside it, $defs, anyOf/oneOf merged with their siblings, required names no property describes', () => {
    const schema = {
      $defs: { Id: { type: 'string', format: 'uuid' }, Money: { type: 'number', multipleOf: 0.01, exclusiveMinimum: 0 } },
      type: 'object',
      properties: {
        id: { $ref: '#/$defs/Id' },
        price: { $ref: '#/$defs/Money', maximum: 100 },
        at: { type: 'string', format: 'date-time' },
        kind: { const: 'order' },
        note: { anyOf: [{ type: 'null' }, { type: 'string', minLength: 10 }] },
        contact: { type: 'object', properties: { email: { type: 'string', format: 'email' } }, oneOf: [{ required: ['email'] }] },
        tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]{2,5}$' }, minItems: 2, maxItems: 4, uniqueItems: true },
      },
      required: ['id', 'price', 'at', 'kind', 'note', 'contact', 'tags', 'extra'],
      additionalProperties: { type: 'integer', minimum: 7 },
    }
    const v = valid(schema) as Record<string, unknown>
    expect(v.extra).toBe(7)
    expect(v.price).toBe(0.01)
  })

  test('a ref pointer with a bad %-escape is no ref, not a thrown error', () => {
    expect(exampleFromSchema({ type: 'object', properties: { a: { $ref: '#/$defs/%E0%A4%A', type: 'string' } } })).toEqual({ a: 'example' })
  })
})
