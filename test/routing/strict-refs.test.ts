// What a described `$ref` becomes for OpenAI's strict mode when the schema is hostile: written-out
// copies are bounded in all (each is its definition again), and property names such as
// `__proto__` and `constructor` stay properties.
import { describe, expect, test } from 'bun:test'
import { refsAlone } from '../../src/routing/strict-refs.ts'
import { strictFor } from '../../src/routing/translate.ts'
import { addedNullsOf } from '../../src/routing/strict-fit.ts'

describe('refsAlone', () => {
  test('a large definition described at many uses is not copied past the budget', () => {
    const big = { type: 'object', properties: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`p${i}`, { type: 'string' }])) }
    const schema = {
      type: 'object',
      $defs: { big },
      properties: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`f${i}`, { $ref: '#/$defs/big', description: `use ${i}` }])),
    }
    const out = refsAlone(schema)
    // 64 copies would be 64 × 2,000 properties; the budget lets about ten through
    expect(JSON.stringify(out).length).toBeLessThan(JSON.stringify(schema).length * 15)
    const props = out.properties as Record<string, Record<string, unknown>>
    expect(props.f0!.description).toBe('use 0')
    expect(props.f63).toEqual({ $ref: '#/$defs/big' })
    for (const p of Object.values(props)) if ('$ref' in p) expect(Object.keys(p)).toEqual(['$ref'])
  })

  test('`__proto__` and `constructor` as property names stay own properties', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","__proto__":{"x":1}},"constructor":{"$ref":"#/$defs/a","description":"d"}},"$defs":{"a":{"type":"number"}}}')
    const out = refsAlone(schema)
    const props = out.properties as Record<string, unknown>
    expect(Object.hasOwn(props, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype)
    // a keyword of that name inside a schema too
    const inner = props['__proto__'] as Record<string, unknown>
    expect(Object.hasOwn(inner, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype)
    expect(props['constructor'] as unknown).toEqual({ type: 'number', description: 'd' })
  })

  test("a described $ref written out, then fitted for strict mode: the copy's optional property is nullable and noted, the definition's too", () => {
    const place = { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] }
    const schema = { type: 'object', properties: { home: { $ref: '#/$defs/place', description: 'Home' } }, required: ['home'], $defs: { place } }
    const { schema: sent, strict } = strictFor(schema)
    expect(strict).toBe(true)
    const home = (sent.properties as Record<string, Record<string, unknown>>).home!
    expect(home).toEqual({ ...place, description: 'Home', properties: { city: { type: 'string' }, zip: { type: ['string', 'null'] } }, required: ['city', 'zip'], additionalProperties: false })
    expect(addedNullsOf(sent)?.at.get(home)).toEqual(new Set(['zip']))
    // the input is left as it came
    expect(place.required).toEqual(['city'])
  })

  test('the written-out copies past what strict mode takes in all (5,000 properties) do not fit: the schema goes without strict, its refs alone', () => {
    const big = { type: 'object', properties: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`p${i}`, { type: 'string' }])) }
    const schema = { type: 'object', $defs: { big }, properties: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`f${i}`, { $ref: '#/$defs/big', description: `use ${i}` }])) }
    const { schema: sent, strict } = strictFor(schema)
    expect(strict).toBe(false)
    expect(sent).toEqual(refsAlone(schema))
    expect(addedNullsOf(sent)).toBeUndefined()
  })
})
