// Token counts as a server of OpenAI's wire may send them: a count as a string of digits is that
// number, read as the Anthropic wire's are (taken for no usage, the reply's tokens were counted by
// the gateway instead: a 1,000-token prompt billed as 2); a negative or fractional one is none, and
// a record is never priced below zero (which would give its key credit back).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { generationOf } from '../helpers/records.ts'

let up: FakeUpstream
let gw: Gateway
let openai: OpenAI
beforeAll(async () => {
  up = await startFakeUpstream()
  gw = await startGateway({ logLevel: 'silent', env: upstreamEnv(up) })
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

const record = (id: string) => generationOf(gw, id)

function completion(usage: Record<string, unknown>) {
  const body = fixtureJson('openai/chat/nonstream-text.json')
  body.id = `chatcmpl-${crypto.randomUUID().replaceAll('-', '')}`
  body.model = 'gpt-4o-mini'
  body.usage = usage
  return body
}

test('a negative count is none: the record is never priced below zero', async () => {
  up.script({ json: completion({ prompt_tokens: 1_000, completion_tokens: -1_000_000_000, total_tokens: -999_999_000 }) })
  const c = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] })
  const g = await record(c.id)
  expect(g.cost).toBeGreaterThanOrEqual(0)
  expect(g.usage.completion_tokens).toBeGreaterThanOrEqual(0)
})

test('counts as strings of digits are those numbers', async () => {
  up.script({ json: completion({ prompt_tokens: 1_000, completion_tokens: 10, total_tokens: 1_010 }) })
  const plain = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] })
  up.script({ json: completion({ prompt_tokens: '1000', completion_tokens: '10', total_tokens: '1010', prompt_tokens_details: { cached_tokens: '0' } }) })
  const texts = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] })
  const [a, b] = [await record(plain.id), await record(texts.id)]
  expect(b.usage).toEqual(a.usage)
  expect(b.cost).toBe(a.cost)
})
