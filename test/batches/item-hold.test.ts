// A batch item's hold on the main thread (src/batches/item-hold.ts), against a billing that writes
// down what it is asked: a fallback is held at its own price when it is dearer, and the item keeps
// a hold whatever happens, since its retries begin at its own model again. The credit itself is
// tested over HTTP (held-beyond.test.ts).
import { describe, expect, test } from 'bun:test'
import type { Admission, AdmitAsk, AdmitInput } from '../../src/billing/admission.ts'
import type { Billing } from '../../src/billing/billing.ts'
import { beyondOf, beyondText, ItemHold, premiumsOfColumn, promptWritesOf } from '../../src/batches/item-hold.ts'
import { HoldAsks } from '../../src/batches/hold-asks.ts'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
import type { ApiKey } from '../../src/http/context.ts'

const catalog = buildCatalog(loadConfig({ env: {}, cwd: '/' }))
const key = { id: 'key_1', credits: 1 } as ApiKey

/** A billing that holds whatever it is asked to (or refuses, or answers later), and says what is held. */
function billing(answer: (input: AdmitInput) => Admission | Promise<Admission> = () => ({ reservationId: crypto.randomUUID() })) {
  const held = new Map<string, string>()
  const kept = new Set<string>()
  const fake = {
    admit(input: AdmitInput) {
      const a = answer(input)
      const note = (ad: Admission) => (ad && held.set(ad.reservationId, input.model.id), ad)
      return a instanceof Promise ? a.then(note) : note(a)
    },
    release: (a: Admission) => void (a && held.delete(a.reservationId)),
    keep(a: Admission) {
      if (a) kept.add(a.reservationId)
      return () => void (a && kept.delete(a.reservationId))
    },
  }
  return { b: fake as unknown as Billing, models: () => [...held.values()], kept }
}

const input = (model: string): AdmitInput => ({ apiKey: key, model: catalog.resolve(model)!, promptTokens: 100, maxOutputTokens: 1_000 })
const ask = (model: string): AdmitAsk => ({ model, promptTokens: 100, maxOutputTokens: 1_000 })

async function holding(model: string, f: ReturnType<typeof billing>) {
  const first = await f.b.admit(input(model))
  return new ItemHold({ billing: f.b, catalog }, input(model), first)
}

describe('ItemHold', () => {
  test('a dearer fallback is held at its own price, then the first hold goes; the end gives back the last, renewed till then', async () => {
    const f = billing()
    const hold = await holding('claude-haiku-4-5', f)
    expect(await hold.anew(ask('claude-opus-4-1'))).toBe(true)
    expect(f.models()).toEqual(['claude-opus-4-1'])
    expect(f.kept.size).toBe(1)
    hold.end()
    expect(f.models()).toEqual([])
    expect(f.kept.size).toBe(0)
  })

  test('a cheaper fallback runs on the hold the item has: its retries begin at its own model again', async () => {
    const f = billing()
    const hold = await holding('claude-opus-4-1', f)
    expect(await hold.anew(ask('claude-haiku-4-5'))).toBe(true)
    expect(f.models()).toEqual(['claude-opus-4-1'])
  })

  test('a fallback the key cannot be held for is refused, and the item keeps the hold it had', async () => {
    const f = billing((i) => {
      if (i.model.id === 'claude-opus-4-1') throw new Error('Credits exhausted')
      return { reservationId: 'first' }
    })
    const hold = await holding('claude-haiku-4-5', f)
    await expect(hold.anew(ask('claude-opus-4-1'))).rejects.toThrow('Credits exhausted')
    expect(f.models()).toEqual(['claude-haiku-4-5'])
    expect(await hold.anew(ask('no-such-model'))).toBe(false)
  })

  test('an item that ended while its fallback was being held: the new hold is given back', async () => {
    let answer!: (a: Admission) => void
    const f = billing((i) => (i.model.id === 'claude-opus-4-1' ? new Promise<Admission>((r) => (answer = r)) : { reservationId: 'first' }))
    const hold = await holding('claude-haiku-4-5', f)
    const asked = hold.anew(ask('claude-opus-4-1'))
    hold.end()
    answer({ reservationId: 'late' })
    expect(await asked).toBe(false)
    expect(f.models()).toEqual([])
    expect(f.kept.size).toBe(0)
  })
})

describe('the beyond column', () => {
  test('written and read back; null (an item stored before the column was) is nothing', () => {
    const b = { webSearches: 5, fileSearches: 2, inputTokens: 40_000, audioOutput: false }
    expect(beyondOf(beyondText(b))).toEqual(b)
    expect(beyondText(undefined)).toBeNull()
    expect(beyondOf(null)).toBeUndefined()
  })

  test("keeps the price an item's prompt can take; an item stored without it is held at an hour's cache write", () => {
    const b = { webSearches: 5, fileSearches: 2, inputTokens: 40_000, audioOutput: false }
    expect(promptWritesOf(beyondText(b, '5m'))).toBe('5m')
    expect(beyondOf(beyondText(b, '5m'))).toEqual(b)
    // nothing beyond, and a prompt that caches nothing: the column keeps that alone
    expect(promptWritesOf(beyondText(undefined, 'none'))).toBe('none')
    expect(beyondOf(beyondText(undefined, 'none'))).toBeUndefined()
    expect(beyondText(undefined, '1h')).toBeNull()
    expect([promptWritesOf(null), promptWritesOf(beyondText(b)), promptWritesOf('{"promptWrites":"2h"}'), promptWritesOf('not json')]).toEqual(['1h', '1h', '1h', '1h'])
  })

  test("keeps Anthropic's dearer modes an item asks for (fast mode, US-only inference), beside the rest", () => {
    const b = { webSearches: 1, inputTokens: 8_000, audioOutput: false, calls: 2 }
    const text = beyondText(b, 'none', { speed: 'fast', inferenceGeo: 'us' })
    expect(premiumsOfColumn(text)).toEqual({ speed: 'fast', inferenceGeo: 'us' })
    expect(beyondOf(text)).toEqual({ ...b, fileSearches: 0 })
    expect(promptWritesOf(text)).toBe('none')
    expect(beyondOf(beyondText(undefined, '1h', { inferenceGeo: 'us' }))).toBeUndefined()
    expect([premiumsOfColumn(null), premiumsOfColumn(beyondText(b)), premiumsOfColumn('not json')]).toEqual([undefined, undefined, undefined])
  })
})

describe("a worker's ask", () => {
  test('answered, it resolves or rejects as the main thread says; unanswered in time, it is refused, and a late answer is let go', async () => {
    const asked: number[] = []
    const asks = new HoldAsks((m) => void (m.type === 'hold' && asked.push(m.n)), 30)
    const a = asks.ask(1, ask('claude-opus-4-1'))
    const b = asks.ask(1, ask('claude-opus-4-1'))
    asks.answered(asked[0]!, true)
    asks.answered(asked[1]!, false)
    expect(await a).toBeUndefined()
    expect(await b.catch((e: Error) => e.message)).toMatch(/could not be held/)
    // a main thread that never answers: the item goes on without the fallback, not stuck in its slot
    const never = asks.ask(1, ask('claude-opus-4-1'))
    expect(await never.catch((e: Error) => e.message)).toMatch(/could not be held/)
    asks.answered(asked[2]!, true)
  })
})
