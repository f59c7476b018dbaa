// Every field the @anthropic-ai/sdk Message type declares required (`container`, `diagnostics`,
// `stop_details`, …; null where the type allows) is in a translated reply, plain and streamed,
// and in its usage: a typed client reads them as present.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { missingFields } from '../helpers/sdk-required.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

for (const model of ['mock-gpt', 'mock-claude']) {
  test(`${model}: the Message and its usage carry every field the SDK declares, plain and streamed`, async () => {
    const client = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
    const body = { model, max_tokens: 50, messages: [{ role: 'user' as const, content: 'mock: text hi' }] }
    for (const m of [await client.messages.create(body), await client.messages.stream(body).finalMessage()]) {
      expect(missingFields(m, '@anthropic-ai/sdk', 'messages/messages.d.ts', 'Message')).toEqual([])
      expect(missingFields(m.usage, '@anthropic-ai/sdk', 'messages/messages.d.ts', 'Usage')).toEqual([])
      expect({ container: m.container, diagnostics: m.diagnostics }).toEqual({ container: null, diagnostics: null })
    }
  })

  // the beta Message (`client.beta.messages`, Claude Code's) adds context_management, and its
  // usage iterations; its usage's fallback_credit is absent, as Anthropic leaves it, when the
  // request carried no fallback credit token
  test(`${model}: the beta Message and its usage carry every field the SDK declares, plain and streamed`, async () => {
    const client = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
    const body = { model, max_tokens: 50, messages: [{ role: 'user' as const, content: 'mock: text hi' }] }
    for (const m of [await client.beta.messages.create(body), await client.beta.messages.stream(body).finalMessage()]) {
      expect(missingFields(m, '@anthropic-ai/sdk', 'beta/messages/messages.d.ts', 'BetaMessage')).toEqual([])
      expect(missingFields(m.usage, '@anthropic-ai/sdk', 'beta/messages/messages.d.ts', 'BetaUsage')).toEqual(['fallback_credit'])
    }
  })
}
