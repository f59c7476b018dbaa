// What OpenAI's hosted tools on the Responses API are billed for, beyond the model's tokens:
// - the image generation tool runs an image model whose tokens (`tool_usage.image_gen`) are
//   billed at its own rates: recorded as nothing, an image of gpt-image-1 at high quality cost
//   its key nothing of the $0.25 or so the operator paid, and a funded key was held nothing for it;
// - a web search is billed as `tool_usage.web_search.num_requests` counts it: opening a page is
//   an item of the output too, and was billed as a search;
// - `service_tier: "ultrafast"` has no known price: recorded at standard's, and held at it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig({ SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' })
})
afterAll(async () => {
  await rig.stop()
})

const catalog = buildCatalog(loadConfig({ env: {}, flags: {}, cwd: '/nonexistent' }))
const none = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
const priced = (model: string, u: Record<string, number> = {}) => catalog.cost(catalog.resolve(model)!, { ...none, ...u })!
/** The fixture's usage (gpt-4o: 14 in, 8 out) at its price. */
const tokensOnly = () => priced('gpt-4o', { inputTokens: 14, outputTokens: 8 })
const M = 1e6

const image = { id: 'ig_1', type: 'image_generation_call', status: 'completed', quality: 'high', size: '1024x1024', output_format: 'png', result: 'iVBORw0KGgo=', revised_prompt: 'A cat.' }
const imageTool = (model?: string) => ({ type: 'image_generation', ...(model ? { model } : {}), quality: 'high', size: '1024x1024' })
/** 50 prompt tokens (10 of them an input image's) and one high-quality square image. */
const imageGen = { input_tokens: 50, input_tokens_details: { image_tokens: 10, text_tokens: 40 }, output_tokens: 4160, total_tokens: 4210 }
/** gpt-image-1's rates for it: text in $5, image in $10, image out $40 per million. */
const gptImage1 = (40 * 5 + 10 * 10 + 4160 * 40) / M

function reply(id: string, extra: Record<string, unknown>) {
  const r = fixtureJson('openai/responses/nonstream-text.json')
  return { ...r, id, ...extra, output: [...((extra.output as unknown[]) ?? []), ...r.output] }
}

describe('the image generation tool', () => {
  test("a reply's image tokens are recorded at its image model's rates", async () => {
    rig.up.script({ json: JSON.stringify(reply('resp_image_1', { output: [image], tools: [imageTool('gpt-image-1')], tool_usage: { image_gen: imageGen, web_search: { num_requests: 0 } } })) })
    const r = await rig.client.responses.create({ model: 'gpt-4o', input: 'Draw a cat.', tools: [imageTool('gpt-image-1') as never], store: false })
    const g = await rig.generation(r.id)
    expect(g.unpriced).toBe(false)
    expect(g.cost).toBeCloseTo(tokensOnly() + gptImage1, 12)
  })

  test('streamed: the usage in response.completed prices the image', async () => {
    let usage = { input_tokens: 0, output_tokens: 0 }
    const sse = fixture('openai/responses/stream-text.sse').replace(/data: (\{"type":"response\.completed".*)/, (_, data: string) => {
      const e = JSON.parse(data)
      usage = e.response.usage
      e.response.id = 'resp_image_stream'
      e.response.output = [image, ...e.response.output]
      e.response.tools = [imageTool('gpt-image-1-mini')]
      e.response.tool_usage = { image_gen: { ...imageGen, output_tokens_details: { image_tokens: 4000, text_tokens: 160 } }, web_search: { num_requests: 0 } }
      return 'data: ' + JSON.stringify(e)
    })
    rig.up.script({ sse })
    const stream = await rig.client.responses.create({ model: 'gpt-4.1', input: 'Draw a cat.', tools: [imageTool('gpt-image-1-mini') as never], stream: true, store: false })
    let id = ''
    for await (const e of stream) if (e.type === 'response.completed') id = e.response.id
    expect(id).toBe('resp_image_stream')
    const g = await rig.generation(id)
    expect(usage.output_tokens).toBeGreaterThan(0)
    const tokens = priced('gpt-4.1', { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens })
    // gpt-image-1-mini: text in $2, image in $2.50, output $8 per million
    expect(g.cost).toBeCloseTo(tokens + (40 * 2 + 10 * 2.5 + 4160 * 8) / M, 12)
  })

  test('an image model of no known price (or none named) is priced at the dearest known rates', async () => {
    for (const [id, model] of [['resp_image_new', 'gpt-image-2.6-sunburst'], ['resp_image_unnamed', undefined]] as const) {
      rig.up.script({ json: JSON.stringify(reply(id, { output: [image], tools: [imageTool(model)], tool_usage: { image_gen: imageGen, web_search: { num_requests: 0 } } })) })
      const r = await rig.client.responses.create({ model: 'gpt-4o', input: 'Draw a cat.', tools: [imageTool(model) as never], store: false })
      expect((await rig.generation(r.id)).cost).toBeCloseTo(tokensOnly() + gptImage1, 12)
    }
  })

  test("a reply that counts no image tokens: each image made at the most its quality and size are billed", async () => {
    rig.up.script({ json: JSON.stringify(reply('resp_image_uncounted', { output: [image], tools: [imageTool('gpt-image-1')] })) })
    const r = await rig.client.responses.create({ model: 'gpt-4o', input: 'Draw a cat.', tools: [imageTool('gpt-image-1') as never], store: false })
    expect((await rig.generation(r.id)).cost).toBeCloseTo(tokensOnly() + (4160 * 40) / M, 12)
  })
})

describe('web searches', () => {
  const searchCall = (n: number) => ({ id: `ws_${n}`, type: 'web_search_call', status: 'completed', action: { type: n === 0 ? 'search' : 'open_page', query: 'x' } })

  test('billed as tool_usage counts them, not as their items', async () => {
    rig.up.script({ json: JSON.stringify(reply('resp_search_counted', { output: [searchCall(0), searchCall(1), searchCall(2)], tool_usage: { image_gen: { input_tokens: 0, input_tokens_details: { image_tokens: 0, text_tokens: 0 }, output_tokens: 0, total_tokens: 0 }, web_search: { num_requests: 1 } } })) })
    const r = await rig.client.responses.create({ model: 'gpt-4o', input: 'Search.', tools: [{ type: 'web_search' }], store: false })
    expect((await rig.generation(r.id)).cost).toBeCloseTo(priced('gpt-4o', { inputTokens: 14, outputTokens: 8, webSearches: 1 }), 12)
  })

  test('a count sent as a string of digits is that count, as the model usage reads it', async () => {
    rig.up.script({ json: JSON.stringify(reply('resp_search_string', { output: [searchCall(0)], tool_usage: { web_search: { num_requests: '3' } } })) })
    const r = await rig.client.responses.create({ model: 'gpt-4o', input: 'Search.', tools: [{ type: 'web_search' }], store: false })
    expect((await rig.generation(r.id)).cost).toBeCloseTo(priced('gpt-4o', { inputTokens: 14, outputTokens: 8, webSearches: 3 }), 12)
  })

  test('a reply without tool_usage: one a web_search_call item', async () => {
    rig.up.script({ json: JSON.stringify(reply('resp_search_items', { output: [searchCall(0), searchCall(1)] })) })
    const r = await rig.client.responses.create({ model: 'gpt-4o', input: 'Search.', tools: [{ type: 'web_search' }], store: false })
    expect((await rig.generation(r.id)).cost).toBeCloseTo(priced('gpt-4o', { inputTokens: 14, outputTokens: 8, webSearches: 2 }), 12)
  })
})

const postResponses = (key: string, body: unknown) =>
  fetch(`${rig.gw.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** What one Responses request holds on a funded key while the upstream answers it. */
async function holdOf(body: Record<string, unknown>): Promise<number> {
  const { key, record } = await rig.gw.services.keys.create({ name: 'held', credits: 1000 })
  rig.up.script({ waitMs: 400, json: JSON.stringify(fixtureJson('openai/responses/nonstream-text.json')) })
  const pending = postResponses(key, body)
  let usd = 0
  for (let i = 0; i < 100 && usd === 0; i++) {
    await Bun.sleep(10)
    const f = await rig.gw.services.billing.figures(record.id)
    usd = f ? f.reserved : rig.gw.services.billing.reserved(record.id)
  }
  expect((await pending).status).toBe(200)
  return usd
}

describe('held for the images it may make', () => {
  const body = { model: 'gpt-4o', input: 'Draw a cat.', max_output_tokens: 100, store: false }

  test('each image its max_tool_calls allows, at the largest its quality and size may be, with its partial images', async () => {
    const plain = await holdOf(body)
    // gpt-image-1 at high quality, 1024×1536: 6,240 output tokens, and 100 for each partial image
    const tool = { type: 'image_generation', model: 'gpt-image-1', quality: 'high', size: '1024x1536', partial_images: 2 }
    const two = await holdOf({ ...body, tools: [tool], max_tool_calls: 2 })
    const outputs = (2 * (6240 + 200) * 40) / M
    expect(two - plain).toBeGreaterThanOrEqual(outputs)
    // what else it holds is the prompt read by each image's model, a few hundred tokens here
    expect(two - plain).toBeLessThan(outputs + 0.02)
  })

  test('no bound on its calls, no quality or model named: ten images, each at the most a model of unknown count may make', async () => {
    const plain = await holdOf(body)
    const held = await holdOf({ ...body, tools: [{ type: 'image_generation' }] })
    // 20,000 output tokens an image at the dearest known rate, gpt-image-1's $40 a million
    expect(held - plain).toBeGreaterThanOrEqual((10 * 20_000 * 40) / M)
  })
})

describe('service_tier ultrafast, of no known price', () => {
  test('a funded key asking for it is refused, naming service_tier', async () => {
    const { key } = await rig.gw.services.keys.create({ name: 'funded', credits: 10 })
    const res = await postResponses(key, { model: 'gpt-5.6-sol', input: 'Hi.', service_tier: 'ultrafast' })
    expect(res.status).toBe(400)
    const err = (await res.json()) as { error: { message: string } | string }
    const message = typeof err.error === 'string' ? err.error : err.error.message
    expect(message).toContain('service_tier')
    expect(message).toContain('no known price')
    // chat asks the same of a funded key
    const chat = await fetch(`${rig.gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'Hi.' }], service_tier: 'ultrafast' }) })
    expect(chat.status).toBe(400)
  })

  test('a reply served at it is recorded unpriced, never at the standard price', async () => {
    rig.up.script({ json: JSON.stringify({ ...fixtureJson('openai/responses/nonstream-text.json'), id: 'resp_ultrafast', model: 'gpt-5.6-sol', service_tier: 'ultrafast' }) })
    const r = await rig.client.responses.create({ model: 'gpt-5.6-sol', input: 'Hi.', service_tier: 'ultrafast' as never, store: false })
    const g = await rig.generation(r.id)
    expect(g.unpriced).toBe(true)
    expect(g.cost).toBeNull()

    const completion = fixtureJson('openai/chat/nonstream-text.json')
    completion.id = 'chatcmpl-ultrafast'
    completion.model = 'gpt-5.6-sol'
    completion.service_tier = 'ultrafast'
    rig.up.script({ json: JSON.stringify(completion) })
    const c = await rig.client.chat.completions.create({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'Hi.' }] })
    expect((await rig.generation(c.id)).unpriced).toBe(true)
  })
})
