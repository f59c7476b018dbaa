// Model lists through the official SDKs.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

test('openai models.list() on /api/alpha/v1 and /api/v1 returns the catalog', async () => {
  for (const base of ['/api/alpha/v1', '/api/v1']) {
    const client = new OpenAI({ apiKey: gw.key, baseURL: gw.url + base })
    const ids: string[] = []
    for await (const m of client.models.list()) ids.push(m.id)
    expect(ids).toEqual(gw.services.catalog.list().map((m) => m.id))
    expect(ids).toContain('gpt-4o')
    expect(ids).toContain('claude-sonnet-4-5')
  }
  const client = new OpenAI({ apiKey: gw.key, baseURL: gw.url + '/api/alpha/v1' })
  expect((await client.models.retrieve('gpt-4o-2024-08-06')).id).toBe('gpt-4o')
})

test('anthropic models.list() on /api/beta returns the catalog in its shape', async () => {
  const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url + '/api/beta' })
  const ids: string[] = []
  for await (const m of client.models.list()) {
    expect(m.type).toBe('model')
    ids.push(m.id)
  }
  expect(ids).toContain('claude-haiku-4-5')
})
