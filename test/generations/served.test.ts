// A generation record says how its reply was served, where the upstream said, in its words:
// OpenAI's `service_tier`, Anthropic's `speed`, `inference_geo` and `service_tier`. The record's cost already
// counted them (fast mode at up to six times, US-only inference at 1.1×, flex at half, priority
// at up to 2.5×); without them a user saw the cost and could not tell why it was that.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { fixture, fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { generationOf } from '../helpers/records.ts'

let up: FakeUpstream
let gw: Gateway
let openai: OpenAI
let anthropic: Anthropic
beforeAll(async () => {
  up = await startFakeUpstream()
  gw = await startGateway({ logLevel: 'silent', env: upstreamEnv(up) })
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

const auth = () => ({ authorization: `Bearer ${gw.key}` })

const record = (id: string) => generationOf(gw, id)

const served = (g: Record<string, unknown>) => ({ service_tier: g.service_tier, speed: g.speed, inference_geo: g.inference_geo })

/** A Claude reply whose usage says how it was served (Anthropic's JSON fixture). */
function claudeJson(said: Record<string, string>) {
  const body = fixtureJson('anthropic/messages/nonstream-text.json')
  body.id = `msg_${crypto.randomUUID().replaceAll('-', '')}`
  body.model = 'claude-opus-4-7'
  Object.assign(body.usage, said)
  return body
}

/** Anthropic's stream fixture, saying at message_start how it serves (message_delta's usage leaves that out, as Anthropic's does). */
function claudeSse(said: string): string {
  return fixture('anthropic/messages/stream-text.sse')
    .replace('"usage":{"input_tokens":27,"output_tokens":1}', `"usage":{"input_tokens":27,"output_tokens":1,${said}}`)
    .replaceAll('claude-3-opus-20240229', 'claude-opus-4-7')
    .replaceAll('msg_01PgicqXb8hKdXEPHm3LLTGF', `msg_${crypto.randomUUID().replaceAll('-', '')}`)
}

describe("Anthropic's speed, inference_geo and service tier, as the reply's usage says them", () => {
  test('a JSON reply through the pass-through: fast mode, US-only inference, on priority capacity', async () => {
    up.script({ json: claudeJson({ speed: 'fast', inference_geo: 'us', service_tier: 'priority' }) })
    const m = await anthropic.messages.create({ model: 'claude-opus-4-7', max_tokens: 50, messages: [{ role: 'user', content: 'Hi.' }] })
    expect(served(await record(m.id))).toEqual({ service_tier: 'priority', speed: 'fast', inference_geo: 'us' })
  })

  test('the standard modes are said too (standard, global): a record at the standard price says why', async () => {
    up.script({ json: claudeJson({ speed: 'standard', inference_geo: 'global' }) })
    const m = await anthropic.messages.create({ model: 'claude-opus-4-7', max_tokens: 50, messages: [{ role: 'user', content: 'Hi.' }] })
    expect(served(await record(m.id))).toEqual({ service_tier: 'standard', speed: 'standard', inference_geo: 'global' })
  })

  test('a stream through the pass-through, and the same stream through the chat surface', async () => {
    up.script({ sse: claudeSse('"speed":"fast","inference_geo":"us"') })
    const stream = await anthropic.messages.create({ model: 'claude-opus-4-7', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi.' }] })
    let id = ''
    for await (const e of stream) if (e.type === 'message_start') id = e.message.id
    expect(served(await record(id))).toEqual({ service_tier: null, speed: 'fast', inference_geo: 'us' })

    up.script({ sse: claudeSse('"speed":"standard","inference_geo":"global"') })
    const chunks = await openai.chat.completions.create({ model: 'claude-opus-4-7', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi.' }] })
    let chatId = ''
    for await (const c of chunks) chatId ||= c.id
    expect(served(await record(chatId))).toEqual({ service_tier: null, speed: 'standard', inference_geo: 'global' })
  })

  test('a JSON reply through the chat surface', async () => {
    up.script({ json: claudeJson({ speed: 'fast', inference_geo: 'global' }) })
    const c = await openai.chat.completions.create({ model: 'claude-opus-4-7', max_tokens: 50, messages: [{ role: 'user', content: 'Hi.' }] })
    expect(served(await record(c.id))).toEqual({ service_tier: 'standard', speed: 'fast', inference_geo: 'global' })
  })

  test('a reply that says neither: both null, never guessed', async () => {
    up.script({ json: claudeJson({}) })
    const m = await anthropic.messages.create({ model: 'claude-opus-4-7', max_tokens: 50, messages: [{ role: 'user', content: 'Hi.' }] })
    expect(served(await record(m.id))).toEqual({ service_tier: 'standard', speed: null, inference_geo: null })
  })
})

describe("OpenAI's service_tier, as the reply says it", () => {
  test('a chat reply, JSON and streamed: the tier it names, standard (default) too', async () => {
    const body = fixtureJson('openai/chat/nonstream-text.json')
    body.id = 'chatcmpl-served-flex'
    body.service_tier = 'flex'
    up.script({ json: body })
    const c = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] })
    expect(served(await record(c.id))).toEqual({ service_tier: 'flex', speed: null, inference_geo: null })

    // the recorded stream says `default` in every chunk
    up.script({ sse: fixture('openai/chat/stream-text-include-usage.sse') })
    const chunks = await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi.' }] })
    let id = ''
    for await (const ch of chunks) id ||= ch.id
    expect(served(await record(id))).toEqual({ service_tier: 'default', speed: null, inference_geo: null })
  })

  test('a Responses stream: the tier its end says served it (its start says only the one asked)', async () => {
    // the recorded stream's created event says `auto` (asked); its completed event `default`
    up.script({ sse: fixture('openai/responses/stream-text.sse').replace(/"service_tier":"default"/, '"service_tier":"priority"') })
    const stream = await openai.responses.create({ model: 'gpt-4.1', input: 'Hi.', stream: true, store: false })
    let id = ''
    for await (const e of stream) if (e.type === 'response.completed') id = e.response.id
    expect(served(await record(id))).toEqual({ service_tier: 'priority', speed: null, inference_geo: null })
  })

  test('through the Messages surface, translated: the tier of the chat reply', async () => {
    const body = fixtureJson('openai/chat/nonstream-text.json')
    body.id = 'chatcmpl-served-scale'
    body.service_tier = 'scale'
    up.script({ json: body })
    const m = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'Hi.' }] })
    expect(served(await record(m.id))).toEqual({ service_tier: 'scale', speed: null, inference_geo: null })
  })

  test('the listing shows them as the lookup does; a tier that is not a word is not stored', async () => {
    const body = fixtureJson('openai/chat/nonstream-text.json')
    body.id = 'chatcmpl-served-odd'
    body.service_tier = '<script>'
    up.script({ json: body })
    const c = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi.' }] })
    expect((await record(c.id)).service_tier).toBeNull()
    const page = (await (await fetch(`${gw.url}/api/v1/generations?limit=200`, { headers: auth() })).json()) as { data: Record<string, unknown>[] }
    const byId = new Map(page.data.map((g) => [g.id, g]))
    expect(served(byId.get('chatcmpl-served-flex')!)).toEqual({ service_tier: 'flex', speed: null, inference_geo: null })
    expect(served(byId.get('chatcmpl-served-odd')!)).toEqual({ service_tier: null, speed: null, inference_geo: null })
    const claude = page.data.find((g) => g.speed === 'fast' && g.inference_geo === 'us')
    expect(claude?.endpoint).toBe('anthropic.messages')
  })
})
