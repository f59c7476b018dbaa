// A strict schema fitted for OpenAI (strict-fit.ts, strictFor) against what a hostile or merely
// large schema can do: definitions that branch into each other must not make the walk (or the
// answer's cleaning) take time exponential in their number; a schema past OpenAI's documented
// size limits must go without strict rather than be refused with a 400; and the branch of a
// union told apart by a discriminating const must be found, so its added nulls come out.
import { describe, expect, test } from 'bun:test'
import { addedNullsOf, fitStrict } from '../../src/routing/strict-fit.ts'
import { withoutAddedNulls } from '../../src/routing/strict-nulls.ts'
import { strictFor } from '../../src/routing/translate.ts'

const obj = (properties: object, required: string[] = [], more: object = {}) => ({ type: 'object', properties, required, ...more })

/** Definitions d0 … d(n-1), each a union of two refs to the next, ending at `last`. */
function chain(n: number, last: object): Record<string, unknown> {
  const defs: Record<string, unknown> = {}
  for (let i = 0; i < n; i++) defs[`d${i}`] = i === n - 1 ? last : { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }
  return defs
}

const timed = <T>(f: () => T): [T, number] => {
  const t0 = performance.now()
  const out = f()
  return [out, performance.now() - t0]
}

describe('a schema of definitions that branch into each other', () => {
  test('an optional property naming one is fitted in time linear in the definitions, not doubling with each', () => {
    // 2^24 paths from d0 to the leaf: walked one by one this blocks the gateway for seconds
    const schema = { ...obj({ x: { $ref: '#/$defs/d0' } }), $defs: chain(25, { type: 'string' }) }
    const [out, ms] = timed(() => fitStrict(schema))
    expect(out).toBeDefined()
    expect(ms).toBeLessThan(2_000)
    expect((out!.properties as any).x).toEqual({ anyOf: [{ $ref: '#/$defs/d0' }, { type: 'null' }] })
  })

  test('a definition nullable only through the chain is still found nullable: its null is meant and stays', () => {
    const schema = { ...obj({ x: { $ref: '#/$defs/d0' } }), $defs: chain(25, { type: ['string', 'null'] }) }
    const [out, ms] = timed(() => fitStrict(schema))
    expect(ms).toBeLessThan(2_000)
    expect((out!.properties as any).x).toEqual({ $ref: '#/$defs/d0' })
  })

  test('an answer whose value matches none of the first branches is cleaned in bounded time', () => {
    // a number is no string: every path from d0 is tried before the union's number branch
    const schema = { ...obj({ x: { anyOf: [{ $ref: '#/$defs/d0' }, { type: 'number' }] }, note: { type: 'string' } }, ['x']), $defs: chain(25, { type: 'string' }) }
    const out = fitStrict(schema)!
    const [text, ms] = timed(() => withoutAddedNulls('{"x":5,"note":null}', addedNullsOf(out)!))
    expect(ms).toBeLessThan(2_000)
    expect(JSON.parse(text)).toEqual({ x: 5 })
  })
})

describe("OpenAI's documented size limits", () => {
  const many = (n: number, width = 4) => Array.from({ length: n }, (_, i) => `v${String(i).padStart(width, '0')}`)

  test('more than 1,000 enum values in all: sent without strict, as it came', () => {
    const within = obj({ a: { type: 'string', enum: many(500) }, b: { type: 'string', enum: many(500) } })
    expect(strictFor(within).strict).toBe(true)
    const past = obj({ a: { type: 'string', enum: many(500) }, b: { type: 'string', enum: many(501) } })
    const r = strictFor(past)
    expect(r.strict).toBe(false)
    expect(r.schema).toEqual(past)
  })

  test('a schema that already fits as it is is held to them too', () => {
    const past = obj({ a: { type: 'string', enum: many(1_001) } }, ['a'], { additionalProperties: false })
    expect(strictFor(past).strict).toBe(false)
  })

  test('more than 120,000 characters of property names, definition names, enum and const values: sent without strict', () => {
    const long = (c: string) => c.repeat(30_000)
    const within = obj({ [long('a')]: { type: 'string' }, b: { const: long('b') }, c: { enum: [long('c')] } })
    expect(strictFor(within).strict).toBe(true)
    const past = { ...obj({ [long('a')]: { type: 'string' }, b: { const: long('b') }, c: { enum: [long('c')] } }), $defs: { [long('d') + 'd'.repeat(10_000)]: { type: 'string' } } }
    expect(strictFor(past).strict).toBe(false)
  })

  test('one enum of more than 250 strings: at most 15,000 characters of them', () => {
    // 251 values of 59 characters (14,809) fit; of 60 (15,060) do not
    const of = (len: number) => obj({ a: { type: 'string', enum: Array.from({ length: 251 }, (_, i) => String(i).padStart(len, 'x')) } })
    expect(strictFor(of(59)).strict).toBe(true)
    expect(strictFor(of(60)).strict).toBe(false)
  })
})

describe("OpenAI's rule for a strict schema's root", () => {
  const closed = (name: string) => obj({ [name]: { type: 'string' } }, [name], { additionalProperties: false })

  test('a root anyOf of closed objects, which strict mode refuses ("root must be an object, not anyOf"): sent without strict', () => {
    const schema = { anyOf: [closed('a'), closed('b')] }
    expect(strictFor(schema)).toEqual({ schema, strict: false })
    expect(strictFor({ type: 'object', ...schema }).strict).toBe(false)
  })

  test('a root that is no object: sent without strict', () => {
    expect(strictFor({ type: 'array', items: closed('a') }).strict).toBe(false)
  })

  test('a closed object root stays strict', () => {
    expect(strictFor(closed('a')).strict).toBe(true)
  })
})

describe('a union whose branches have the same properties', () => {
  test('the branch a discriminating const names is followed, and its added nulls come out', () => {
    const a = obj({ kind: { const: 'a' }, x: { type: 'string' } }, ['kind'])
    const b = obj({ kind: { const: 'b' }, x: { type: 'string' } }, ['kind', 'x'])
    const out = fitStrict(obj({ shape: { anyOf: [a, b] } }, ['shape']))!
    const clean = (v: unknown) => JSON.parse(withoutAddedNulls(JSON.stringify(v), addedNullsOf(out)!))
    expect(clean({ shape: { kind: 'a', x: null } })).toEqual({ shape: { kind: 'a' } })
    expect(clean({ shape: { kind: 'b', x: 'y' } })).toEqual({ shape: { kind: 'b', x: 'y' } })
  })

  test('a const or enum value that is an object or array is matched by its content', () => {
    const a = obj({ tag: { const: { v: 1 } }, x: { type: 'string' } }, ['tag'])
    const b = obj({ tag: { enum: [[2]] }, x: { type: 'string' } }, ['tag', 'x'])
    const out = fitStrict(obj({ shape: { anyOf: [a, b] } }, ['shape']))!
    const clean = (v: unknown) => JSON.parse(withoutAddedNulls(JSON.stringify(v), addedNullsOf(out)!))
    expect(clean({ shape: { tag: { v: 1 }, x: null } })).toEqual({ shape: { tag: { v: 1 } } })
    expect(clean({ shape: { tag: [2], x: 'y' } })).toEqual({ shape: { tag: [2], x: 'y' } })
  })
})
