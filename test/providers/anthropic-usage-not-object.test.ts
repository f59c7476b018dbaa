// A server of Anthropic's wire whose `usage` is not an object (a number, a string) says nothing
// of the tokens: the reply is served and its tokens counted by the gateway, as with no usage at
// all. Reading it as an object (`'speed' in 5`) threw, and the client got a 5xx for a reply the
// upstream had made.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { fixture, fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
let anthropic: Anthropic
let openai: OpenAI
beforeAll(async () => {
  up = await startFakeUpstream()
  gw = await startGateway({ logLevel: 'silent', env: upstreamEnv(up) })
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

function reply(usage: unknown) {
  const body = fixtureJson('anthropic/messages/nonstream-text.json')
  body.id = `msg_${crypto.randomUUID().replaceAll('-', '')}`
  body.model = 'claude-haiku-4-5'
  body.usage = usage
  return body
}

const ask = [{ role: 'user' as const, content: 'Hi.' }]

describe('a usage that is not an object', () => {
  for (const usage of [5, 'lots', true]) {
    test(`${JSON.stringify(usage)}: served through the pass-through and through chat`, async () => {
      up.script({ json: reply(usage) })
      const m = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: ask })
      expect(m.content.length).toBeGreaterThan(0)
      up.script({ json: reply(usage) })
      const c = await openai.chat.completions.create({ model: 'claude-haiku-4-5', messages: ask })
      expect(c.choices[0]!.message.content).toBeTruthy()
      expect(c.usage!.prompt_tokens).toBeGreaterThan(0)
    })
  }

  test('in a stream: served, its tokens counted', async () => {
    const sse = fixture('anthropic/messages/stream-text.sse').replace('"usage":{"input_tokens":27,"output_tokens":1}', '"usage":7')
    up.script({ sse })
    const s = await openai.chat.completions.create({ model: 'claude-haiku-4-5', messages: ask, stream: true, stream_options: { include_usage: true } })
    let text = ''
    for await (const ch of s) text += ch.choices[0]?.delta?.content ?? ''
    expect(text.length).toBeGreaterThan(0)
  })
})
