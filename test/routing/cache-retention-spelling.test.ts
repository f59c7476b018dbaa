// `prompt_cache_retention: "in_memory"` is how the current openai SDK types spell the value
// (chat and responses), and what the OpenAI Agents SDK sends for its `promptCacheRetention:
// 'in-memory'` setting. A Claude model, for which the field is translated away, must take it
// as it takes the hyphenated spelling, on both surfaces, streaming or not, rather than a 400.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
let client: OpenAI
beforeAll(async () => {
  gw = await startGateway()
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await gw.stop()
})

describe('prompt_cache_retention "in_memory" for a Claude model', () => {
  for (const model of ['mock-claude', 'claude-haiku-4-5']) {
    test(`responses, ${model}: the body the Agents SDK sends`, async () => {
      const r = await client.responses.create({ model, instructions: 'x', input: [{ role: 'user', content: 'mock: text kept' }], include: [], tools: [], stream: false, prompt_cache_retention: 'in_memory' })
      expect(r.output_text).toBe('kept')
    })
    test(`chat, ${model}: the body the Agents SDK sends`, async () => {
      const r = await client.chat.completions.create({ model, messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'mock: text kept' }], stream: false, prompt_cache_retention: 'in_memory' })
      expect(r.choices[0]!.message.content).toBe('kept')
    })
    test(`streamed, ${model}, both surfaces`, async () => {
      let text = ''
      for await (const e of await client.responses.create({ model, input: 'mock: text kept', stream: true, prompt_cache_retention: 'in_memory' })) if (e.type === 'response.output_text.delta') text += e.delta
      for await (const c of await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'mock: text kept' }], stream: true, prompt_cache_retention: 'in_memory' })) text += c.choices[0]?.delta.content ?? ''
      expect(text).toBe('keptkept')
    })
  }

  test('an unknown value is still the 400 naming the field and the spellings known', async () => {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-claude', messages: [{ role: 'user', content: 'hi' }], prompt_cache_retention: 'in memory' }),
    })
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as { error: string }
    expect(error).toStartWith('prompt_cache_retention: "in memory" cannot be translated')
    expect(error).toContain('"in_memory"')
  })
})
