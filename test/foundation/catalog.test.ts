// The model catalog: resolution, which provider serves what, and prices from genai-prices.
import { expect, test } from 'bun:test'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig, parseConfigFile } from '../../src/config/load.ts'
import type { Usage } from '../../src/ir/types.ts'

const config = (env: Record<string, string> = {}) => loadConfig({ env, flags: {}, cwd: '/nonexistent' })
const loadFrom = (yaml: string) => parseConfigFile(yaml, {}, 'test.yaml')
const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite })

test('aliases resolve to the canonical entry but go upstream as the client named them', () => {
  const c = buildCatalog(config())
  const m = c.resolve('claude-sonnet-4-5-20250929')!
  expect(m.id).toBe('claude-sonnet-4-5')
  expect(m.upstreamId).toBe('claude-sonnet-4-5-20250929')
  expect(m.family).toBe('anthropic')
  expect(c.resolve('gpt-4o')!.upstreamId).toBe('gpt-4o')
  expect(c.resolve('no-such-model')).toBeUndefined()
  expect(c.resolve('gpt-5-codex')!.surfaces).toEqual(['responses'])
  expect(c.resolve('gpt-4o')!.surfaces).toEqual(['chat', 'responses', 'messages'])
})

test('a family without an upstream is served by mock; a configured one by its provider', () => {
  const none = buildCatalog(config())
  expect(none.resolve('gpt-4o')!.provider).toBe('mock')
  expect(none.resolve('claude-haiku-4-5')!.provider).toBe('mock')
  const both = buildCatalog(config({ OPENAI_API_KEY: 'x', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' }))
  expect(both.resolve('gpt-4o')!.provider).toBe('openai')
  expect(both.resolve('claude-haiku-4-5')!.provider).toBe('anthropic')
  // mock-* ids always go to mock, whatever is configured
  expect(both.resolve('mock-anything')!.provider).toBe('mock')
  expect(both.resolve('mock-claude-test')!.family).toBe('anthropic')
  expect(both.resolve('mock-gpt-test')!.family).toBe('openai')
})

test('ids the price library knows are accepted with its context window', () => {
  const c = buildCatalog(config())
  const m = c.resolve('gpt-4-turbo')
  expect(m?.family).toBe('openai')
  expect(m!.contextWindow).toBeGreaterThan(1000)
})

test('a model known by its id alone reasons by its generation, except the chat models of one; a Claude model says how it thinks', () => {
  const c = buildCatalog(config())
  expect(c.resolve('gpt-5.3')!.reasoning).toBe(true)
  expect(c.resolve('gpt-5-chat-latest')!.reasoning).toBe(false)
  expect(c.resolve('claude-opus-4-7')!.adaptiveThinking).toBe('only')
  expect(c.resolve('claude-sonnet-4-5')!.adaptiveThinking).toBeUndefined()
})

test("what one client names is not listed for the others, however many: the library's loose matches and mock- ids", () => {
  const c = buildCatalog(config())
  const listed = c.list().map((m) => m.id)
  for (let i = 0; i < 5000; i++) {
    expect(c.resolve(`claude-sonnet-4-5-tenant-probe-${i}`)?.family).toBe('anthropic')
    expect(c.resolve(`mock-random-${i}`)?.provider).toBe('mock')
  }
  expect(c.list().map((m) => m.id)).toEqual(listed)
  // still resolved the same on the next request, and priced
  expect(c.resolve('claude-sonnet-4-5-tenant-probe-4999')!.id).toBe('claude-sonnet-4-5-tenant-probe-4999')
  expect(c.cost(c.resolve('claude-sonnet-4-5-tenant-probe-1')!, usage(100_000, 0))).toBeCloseTo(0.3, 6)
})

test('cost: catalog prices (input, output, cache, tiers) × (1 − discount); unpriced is null, never 0', () => {
  const c = buildCatalog(config())
  expect(c.cost(c.resolve('gpt-4o')!, usage(1_000_000, 1_000_000))).toBeCloseTo(2.5 + 10, 6)
  // OpenAI cached input at 1.25/M
  expect(c.cost(c.resolve('gpt-4o')!, usage(0, 0, 1_000_000))).toBeCloseTo(1.25, 6)
  // Anthropic cache write 3.75/M and read 0.3/M on sonnet 4
  expect(c.cost(c.resolve('claude-sonnet-4')!, usage(0, 0, 1_000_000, 1_000_000))).toBeCloseTo(0.3 + 3.75, 6)
  // sonnet 4.5 above 200k input tokens: the long-context tier
  expect(c.cost(c.resolve('claude-sonnet-4-5')!, usage(100_000, 0))).toBeCloseTo(0.3, 6)
  expect(c.cost(c.resolve('claude-sonnet-4-5')!, usage(300_000, 0))).toBeCloseTo(1.8, 6)
  expect(c.cost(c.resolve('mock-gpt')!, usage(10, 10))).toBeNull()
  const discounted = buildCatalog(config({ SWITCHYARD_DISCOUNT: '0.2' }))
  expect(discounted.cost(discounted.resolve('gpt-4o')!, usage(1_000_000, 1_000_000))).toBeCloseTo(12.5 * 0.8, 6)
})

test('a mock id is unpriced, however closely the price library matches it; a configured price still holds', () => {
  const c = buildCatalog(config())
  for (const id of ['mock-gpt', 'mock-claude', 'mock-claude-v2x', 'mock-claude-3-opus', 'mock-gpt-4o']) expect(c.cost(c.resolve(id)!, usage(1000, 1000))).toBeNull()
  const priced = buildCatalog({ ...config(), pricing: { discount: 0, overrides: { 'mock-gpt': { input_mtok: 1, output_mtok: 2 } } } })
  expect(priced.cost(priced.resolve('mock-gpt')!, usage(1_000_000, 1_000_000))).toBe(3)
})

test('config adds models and overrides prices', () => {
  const file = parseConfigFile(
    'models:\n  - id: my-local\n    family: openai\n    context_window: 8192\n    price: { input_mtok: 1, output_mtok: 2 }\npricing:\n  overrides:\n    gpt-4o: { input_mtok: 100, output_mtok: 200 }\n',
    {},
    'test.yaml',
  )
  const base = config()
  const c = buildCatalog({ ...base, models: file.models!, pricing: { discount: 0, overrides: file.pricing!.overrides! } })
  const local = c.resolve('my-local')!
  expect(local.contextWindow).toBe(8192)
  expect(local.provider).toBe('mock')
  expect(c.cost(local, usage(1_000_000, 1_000_000))).toBeCloseTo(3, 6)
  expect(c.cost(c.resolve('gpt-4o')!, usage(1_000_000, 0))).toBeCloseTo(100, 6)
  expect(c.list().map((m) => m.id)).toContain('my-local')
  // a record's cost is the price, not the float sum's noise (0.00037529999999999996)
  const cheap = buildCatalog({ ...base, pricing: { discount: 0, overrides: { 'gpt-4o-mini': { input_mtok: 0.15, output_mtok: 0.6 } } } })
  expect(cheap.cost(cheap.resolve('gpt-4o-mini')!, usage(1234, 317))).toBe(0.0003753)
  expect(cheap.cost(cheap.resolve('gpt-4o-mini')!, usage(33, 77))).toBe(0.00005115)
})

test('env configures upstreams without any file; flags beat env', () => {
  const c = loadConfig({ env: { OPENAI_API_KEY: 'k', PORT: '5000', HOST: '0.0.0.0' }, flags: { port: '6000' }, cwd: '/nonexistent' })
  expect(c.providers.openai).toMatchObject({ baseUrl: 'https://api.openai.com/v1', apiKey: 'k' })
  expect(c.providers.anthropic).toBeUndefined()
  expect(c.port).toBe(6000)
  expect(c.host).toBe('0.0.0.0')
  expect(c.limits).toEqual({ keyRpm: 600, ipRpm: 3000, keyBurstRps: 50, maxBodyBytes: 32 * 1024 * 1024, bodyBudgetBytes: 256 * 1024 * 1024, maxUploadBytes: 512 * 1024 * 1024, keyFileBytes: null, bodyGraceS: 30, bodyMinBytesPerS: 16 * 1024, idleTimeoutS: 30 })
})

test('the derived per-token rates agree with the price library on random usage, tiered models included', async () => {
  const { calcPrice } = await import('@pydantic/genai-prices')
  const c = buildCatalog(config())
  let seed = 7
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
  for (const id of ['gpt-4o', 'gpt-4.1-nano', 'o3', 'gpt-5-mini', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1', 'claude-3-5-haiku-20241022']) {
    const m = c.resolve(id)!
    for (let i = 0; i < 25; i++) {
      const u = usage(rnd(400_000), rnd(50_000), rnd(100_000), rnd(30_000))
      const lib = calcPrice(
        { input_tokens: u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens, cache_read_tokens: u.cacheReadTokens, cache_write_tokens: u.cacheWriteTokens, output_tokens: u.outputTokens },
        m.upstreamId,
        { providerId: m.family },
      )!.total_price
      expect(c.cost(m, u)).toBeCloseTo(lib, 9)
    }
  }
})

test('the parts priced apart agree with the price library: an hour of cache writes, audio, web searches', async () => {
  const { calcPrice } = await import('@pydantic/genai-prices')
  const c = buildCatalog(config())
  let seed = 11
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
  for (const id of ['gpt-4o', 'gpt-5', 'gpt-audio', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1']) {
    const m = c.resolve(id)!
    for (let i = 0; i < 25; i++) {
      const u: Usage = usage(rnd(150_000), rnd(20_000), rnd(50_000), rnd(30_000))
      u.cacheWrite1hTokens = rnd(u.cacheWriteTokens + 1)
      u.inputAudioTokens = rnd(u.inputTokens + 1)
      u.outputAudioTokens = rnd(u.outputTokens + 1)
      u.webSearches = rnd(20)
      const lib = calcPrice(
        {
          input_tokens: u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens,
          cache_read_tokens: u.cacheReadTokens,
          cache_write_tokens: u.cacheWriteTokens,
          cache_write_1h_tokens: u.cacheWrite1hTokens,
          input_audio_tokens: u.inputAudioTokens,
          output_audio_tokens: u.outputAudioTokens,
          output_tokens: u.outputTokens,
          web_searches: u.webSearches,
        },
        m.upstreamId,
        { providerId: m.family },
      )!.total_price
      expect(c.cost(m, u)).toBeCloseTo(lib, 9)
    }
  }
  // by hand, for one of each: Sonnet 4.5 writes for an hour at $6 (5 minutes: $3.75), a search at $0.01
  const sonnet = c.resolve('claude-sonnet-4-5')!
  expect(c.cost(sonnet, { ...usage(10, 100, 0, 10_000), cacheWrite1hTokens: 10_000 })).toBeCloseTo((10 * 3 + 100 * 15 + 10_000 * 6) / 1e6, 12)
  expect(c.cost(sonnet, { ...usage(1000, 200, 0, 0), webSearches: 3 })).toBeCloseTo((1000 * 3 + 200 * 15) / 1e6 + 0.03, 12)
})

test('a price override must give input and output; the parts it leaves out default to them', () => {
  expect(() => loadFrom('pricing:\n  overrides:\n    gpt-4o: { cache_read_mtok: 0.01 }\n')).toThrow(/pricing\.overrides\.gpt-4o\.input_mtok/)
  expect(() => loadFrom('models:\n  - { id: mine, family: openai, price: { output_mtok: 1 } }\n')).toThrow(/models\[0\]\.price\.input_mtok/)
  const file = loadFrom('pricing:\n  overrides:\n    gpt-4o: { input_mtok: 2, output_mtok: 8, cache_write_mtok: 3, web_searches_kcount: 25 }\n')
  const c = buildCatalog({ ...config(), models: [], pricing: { discount: 0, overrides: file.pricing!.overrides! } })
  const m = c.resolve('gpt-4o')!
  // cache reads and audio at the input price, an hour's writes at the write price, a search at $0.025
  const u = { ...usage(1000, 100, 500, 200), cacheWrite1hTokens: 50, inputAudioTokens: 300, outputAudioTokens: 10, webSearches: 2 }
  expect(c.cost(m, u)).toBeCloseTo((1000 * 2 + 100 * 8 + 500 * 2 + 200 * 3) / 1e6 + 0.05, 12)
})
