// What a strict schema Anthropic takes becomes for OpenAI's strict mode (strict-fit.ts), and the
// answer's added nulls taken back out (strict-nulls.ts): what fits, what cannot (and so keeps the
// fallback of being sent without strict), and hostile schemas and answers.
import { describe, expect, test } from 'bun:test'
import { addedNullsOf, fitStrict } from '../../src/routing/strict-fit.ts'
import { withoutAddedNulls } from '../../src/routing/strict-nulls.ts'

const obj = (properties: object, required: string[] = [], more: object = {}) => ({ type: 'object', properties, required, ...more })
/** The fitted schema and its answer cleaner. */
function fitted(schema: Record<string, unknown>) {
  const out = fitStrict(schema)
  if (!out) throw new Error('expected the schema to fit')
  const added = addedNullsOf(out)
  return { schema: out, clean: (v: unknown) => (added ? JSON.parse(withoutAddedNulls(JSON.stringify(v), added)) : v) }
}

describe('fitStrict: what cannot fit keeps the fallback', () => {
  test.each([
    ['a root anyOf', { type: 'object', anyOf: [obj({ a: { type: 'string' } })] }],
    ['a root that is no object', { type: 'array', items: { type: 'string' } }],
    ['an object open on purpose', obj({ a: { type: 'string' } }, [], { additionalProperties: true })],
    ['an object whose extra properties have a schema', obj({ a: { type: 'string' } }, [], { additionalProperties: { type: 'string' } })],
    ['allOf', obj({ a: { allOf: [{ type: 'string' }] } })],
    ['oneOf', obj({ a: { oneOf: [{ type: 'string' }, { type: 'number' }] } })],
    ['not', obj({ a: { type: 'string', not: { const: 'x' } } })],
    ['if/then/else', obj({ a: { type: 'string', if: { const: 'x' }, then: {} } })],
    ['patternProperties', obj({}, [], { patternProperties: { '^x': { type: 'string' } } })],
    ['minLength', obj({ a: { type: 'string', minLength: 2 } })],
    ['a node with no type', obj({ a: { description: 'anything' } })],
    ['a tuple of items', obj({ a: { type: 'array', items: [{ type: 'string' }] } })],
    ['a type list with object in it', obj({ a: { type: ['object', 'string'] } })],
    ['a $ref into a property', obj({ a: { type: 'string' }, b: { $ref: '#/properties/a' } })],
    ['a $ref that leads nowhere', obj({ b: { $ref: '#/$defs/missing' } })],
    ['a required name with no property', obj({ a: { type: 'string' } }, ['a', 'b'])],
    ['a true schema', obj({ a: true })],
  ])('%s', (_, schema) => {
    expect(fitStrict(schema as Record<string, unknown>)).toBeUndefined()
  })

  test("more than 10 levels of objects (OpenAI's limit)", () => {
    let s: Record<string, unknown> = obj({ leaf: { type: 'string' } })
    for (let i = 0; i < 9; i++) s = obj({ inner: s })
    expect(fitStrict(s)).toBeDefined()
    expect(fitStrict(obj({ inner: s }))).toBeUndefined()
  })

  test("more than 5,000 properties in all (OpenAI's limit)", () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string' }]))
    expect(fitStrict(obj(many(5_000)))).toBeDefined()
    expect(fitStrict(obj({ a: obj(many(2_500)), b: obj(many(2_500)) }))).toBeUndefined()
  })

  test('a schema past the walk\'s depth does not fit, and is not walked to its end', () => {
    let s: Record<string, unknown> = { type: 'string' }
    for (let i = 0; i < 10_000; i++) s = { anyOf: [s] }
    expect(fitStrict(obj({ deep: s }))).toBeUndefined()
  })
})

describe('fitStrict and the answer cleaned', () => {
  test('an optional $ref is wrapped in anyOf with null; a definition nullable of its own keeps its null', () => {
    const { schema, clean } = fitted({
      ...obj({ home: { $ref: '#/$defs/place' }, maybe: { $ref: '#/$defs/maybe' } }),
      $defs: { place: obj({ city: { type: 'string' }, zip: { type: 'string' } }, ['city']), maybe: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    })
    expect((schema.properties as any).home).toEqual({ anyOf: [{ $ref: '#/$defs/place' }, { type: 'null' }] })
    expect((schema.properties as any).maybe).toEqual({ $ref: '#/$defs/maybe' })
    expect((schema.$defs as any).place.required).toEqual(['city', 'zip'])
    expect(clean({ home: null, maybe: null })).toEqual({ maybe: null })
    expect(clean({ home: { city: 'Paris', zip: null }, maybe: 'x' })).toEqual({ home: { city: 'Paris' }, maybe: 'x' })
  })

  test('a recursive schema (a tree through `#`) fits, and the nulls are taken out at every level', () => {
    const { schema, clean } = fitted(obj({ name: { type: 'string' }, tag: { type: 'string' }, kids: { type: 'array', items: { $ref: '#' } } }, ['name', 'kids']))
    expect(schema.required).toEqual(['name', 'tag', 'kids'])
    const tree = { name: 'a', tag: null, kids: [{ name: 'b', tag: 'x', kids: [{ name: 'c', tag: null, kids: [] }] }] }
    expect(clean(tree)).toEqual({ name: 'a', kids: [{ name: 'b', tag: 'x', kids: [{ name: 'c', kids: [] }] }] })
  })

  test('under an anyOf, the branch the object\'s keys name is followed; where two fit, the value is left as it came', () => {
    const a = obj({ kind: { const: 'a' }, x: { type: 'string' } }, ['kind'], { additionalProperties: false })
    const b = obj({ kind: { const: 'b' }, y: { type: 'string' } }, ['kind'], { additionalProperties: false })
    const { clean } = fitted(obj({ shape: { anyOf: [a, b] } }, ['shape']))
    expect(clean({ shape: { kind: 'a', x: null } })).toEqual({ shape: { kind: 'a' } })
    expect(clean({ shape: { kind: 'b', y: null } })).toEqual({ shape: { kind: 'b' } })
    const twins = fitted(obj({ shape: { anyOf: [obj({ x: { type: 'string' } }), obj({ x: { type: 'number' } })] } }, ['shape']))
    // both branches have its keys: which one it is cannot be told, so nothing is taken out
    expect(twins.clean({ shape: { x: null } })).toEqual({ shape: { x: null } })
  })

  test('an enum without a type (as the Anthropic SDK writes one) is wrapped; a null that is one of its values is meant', () => {
    const { schema, clean } = fitted(obj({ unit: { enum: ['c', 'f'] }, mode: { enum: ['x', null] } }))
    expect((schema.properties as any).unit).toEqual({ anyOf: [{ enum: ['c', 'f'] }, { type: 'null' }] })
    expect((schema.properties as any).mode).toEqual({ enum: ['x', null] })
    expect(clean({ unit: null, mode: null })).toEqual({ mode: null })
  })

  test('`__proto__` as a property name stays a property, in the schema and in the answer', () => {
    const { schema, clean } = fitted(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"b":{"type":"string"}}}'))
    expect(Object.hasOwn(schema.properties as object, '__proto__')).toBe(true)
    expect(schema.required).toEqual(['__proto__', 'b'])
    const out = JSON.parse(withoutAddedNulls('{"__proto__":"x","b":null}', addedNullsOf(schema)!))
    expect(Object.hasOwn(out, '__proto__')).toBe(true)
    expect(out.b).toBeUndefined()
    expect(clean(JSON.parse('{"__proto__":null,"b":"y"}'))).toEqual({ b: 'y' })
  })

  test('an answer that is no JSON, or has nothing to take out, is the text as it came', () => {
    const { schema } = fitted(obj({ a: { type: 'string' } }))
    const added = addedNullsOf(schema)!
    expect(withoutAddedNulls('{"a": ', added)).toBe('{"a": ')
    expect(withoutAddedNulls('{ "a": "x" }', added)).toBe('{ "a": "x" }')
    expect(withoutAddedNulls('[null]', added)).toBe('[null]')
  })

  test('the numbers of an answer a null is taken out of are written as the model wrote them, not as a double reads them', () => {
    const { schema } = fitted(obj({ id: { type: 'integer' }, ids: { type: 'array', items: { type: 'integer' } }, x: { type: 'number' }, kind: { enum: [1.5, 2] }, note: { type: 'string' } }, ['id', 'ids', 'x', 'kind']))
    const text = '{"id":12345678901234567890,"ids":[9007199254740993,1],"x":0.1000000000000000055,"kind":1.50,"note":null}'
    expect(withoutAddedNulls(text, addedNullsOf(schema)!)).toBe('{"id":12345678901234567890,"ids":[9007199254740993,1],"x":0.1000000000000000055,"kind":1.50}')
  })

  test('a schema with nothing optional but an object left unclosed adds no nulls: nothing to clean', () => {
    const out = fitStrict(obj({ a: { type: 'string' } }, ['a']))
    expect(out).toEqual({ ...obj({ a: { type: 'string' } }, ['a']), additionalProperties: false })
    expect(addedNullsOf(out)).toBeUndefined()
  })
})
