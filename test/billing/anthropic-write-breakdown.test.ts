// A server of Anthropic's wire that reports its cache writes only by lifetime (`cache_creation`:
// five minutes, an hour) and not as `cache_creation_input_tokens`: the writes are their sum. Read
// as none, the record showed no writes and priced the hour's writes at nothing (they are priced
// within the total), though the upstream billed them at twice the input price.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { generationOf } from '../helpers/records.ts'

let up: FakeUpstream
let gw: Gateway
let anthropic: Anthropic
beforeAll(async () => {
  up = await startFakeUpstream()
  gw = await startGateway({ logLevel: 'silent', env: upstreamEnv(up) })
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

const record = (id: string) => generationOf(gw, id)

function reply(usage: Record<string, unknown>) {
  const body = fixtureJson('anthropic/messages/nonstream-text.json')
  body.id = `msg_${crypto.randomUUID().replaceAll('-', '')}`
  body.model = 'claude-haiku-4-5'
  body.usage = { input_tokens: 10, output_tokens: 10, ...usage }
  return body
}

test('writes given only by lifetime are counted and priced as the total would be', async () => {
  up.script({ json: reply({ cache_creation_input_tokens: 100_000, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 100_000 } }) })
  const told = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'Hi.' }] })
  up.script({ json: reply({ cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 100_000 } }) })
  const broken = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'Hi.' }] })
  const [a, b] = [await record(told.id), await record(broken.id)]
  expect(a.cost).toBeGreaterThan(0.15)
  expect(b.cost).toBe(a.cost)
  expect(b.usage.prompt_tokens).toBe(a.usage.prompt_tokens)
})
