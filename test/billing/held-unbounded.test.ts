// A hold must never be nothing for a model that has a price: a term of the request that makes its
// worst case NaN or Infinity (a size read off Object's prototype was one) held nothing, and a
// funded key was then served any number of such requests at once. Such a worst case holds the
// key's whole credit instead; a model with no price still holds nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { worstCase, type AdmitInput } from '../../src/billing/admission.ts'
import type { ApiKey } from '../../src/http/context.ts'

let g: Gateway
beforeAll(async () => {
  g = await startGateway({ logLevel: 'silent' })
})
afterAll(async () => {
  await g?.stop()
})

const funded = { id: 'k', credits: 2.5 } as ApiKey

function held(model: string, beyond: AdmitInput['beyond'], apiKey: ApiKey = funded) {
  const m = g.services.catalog.resolve(model)!
  return worstCase(g.services.catalog, { apiKey, model: m, promptTokens: 1_000, maxOutputTokens: 100, beyond })
}

describe('a worst case that is no number', () => {
  test('of a priced model, NaN or Infinity in a term: the key’s whole credit is held', () => {
    expect(held('gpt-4.1-mini', { webSearches: 0, inputTokens: 0, audioOutput: false, imageGen: { images: 1, outputTokens: Number.NaN } })).toBe(2.5)
    expect(held('gpt-4.1-mini', { webSearches: 1, inputTokens: Number.POSITIVE_INFINITY, audioOutput: false })).toBe(2.5)
    expect(held('claude-haiku-4-5', { webSearches: 1, inputTokens: Number.NaN, audioOutput: false, calls: 3 })).toBe(2.5)
  })

  test('a finite worst case is held as it is, and a model with no price holds nothing', () => {
    const usd = held('gpt-4.1-mini', { webSearches: 1, inputTokens: 8_000, audioOutput: false })
    expect(typeof usd === 'number' && usd > 0 && usd < 0.1).toBe(true)
    expect(held('mock-gpt', { webSearches: Number.NaN, inputTokens: 0, audioOutput: false })).toBeNull()
  })
})
