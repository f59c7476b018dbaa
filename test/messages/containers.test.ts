// An Anthropic code execution container is shared across the operator's organization, which
// every key of the gateway goes through, and holds the files of the key whose request made it:
// a request (messages, or chat to a Claude model) may name one by id only when a reply handed
// it to the same key (a reply's `container`, pass-through or translated, streamed or not) and
// it has not expired. Another key's is a 404 naming the field, before any upstream call.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { fixture } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

let rig: MessagesRig
let otherAnthropic: Anthropic
let otherOpenAI: OpenAI
beforeAll(async () => {
  rig = await startMessagesRig()
  const otherKey = (await rig.gw.services.keys.create({ name: 'another tenant' })).key
  otherAnthropic = new Anthropic({ apiKey: otherKey, baseURL: `${rig.gw.url}/api/beta`, maxRetries: 0 })
  otherOpenAI = new OpenAI({ apiKey: otherKey, baseURL: `${rig.gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await rig.stop()
})

const F = (name: string) => `anthropic/messages/${name}`
const CONTAINER = 'container_011CUoXbFh3wYvVn8fQ2mHandwr'
const FAR = '2030-01-01T00:00:00Z'
const model = 'claude-sonnet-4-5'
const ask = [{ role: 'user' as const, content: 'What is the square root of 2? Run code.' }]
const TOOLS = [{ type: 'code_execution_20250825', name: 'code_execution' }] as any

/** A reply with a container id no other test's reply has (and its expiry, when given). */
function fresh(name: string, expiresAt = FAR): { text: string; container: string } {
  const container = `container_${crypto.randomUUID().replaceAll('-', '')}`
  return { text: fixture(F(name)).replaceAll(CONTAINER, container).replaceAll(FAR, expiresAt), container }
}
const calls = () => rig.up.requests.length
const sentContainer = () => rig.up.requests.at(-1)!.json().container

/** Key A is handed a container: by the messages surface (pass-through) or by chat (translated; its reply does not show it). */
async function containerOfA(how: 'messages' | 'messages-stream' | 'chat' | 'chat-stream', expiresAt?: string): Promise<string> {
  const stream = how.endsWith('stream')
  const { text, container } = fresh(stream ? 'stream-code-execution.handwritten.sse' : 'nonstream-code-execution.handwritten.json', expiresAt)
  rig.up.script(stream ? { sse: text } : { json: text })
  if (how === 'messages') {
    const r = await rig.anthropic.messages.create({ model, max_tokens: 1024, messages: ask, tools: TOOLS })
    expect(r.container?.id).toBe(container)
  } else if (how === 'messages-stream') {
    const s = rig.anthropic.messages.stream({ model, max_tokens: 1024, messages: ask, tools: TOOLS })
    const ids: string[] = []
    for await (const ev of s) if (ev.type === 'message_delta' && ev.delta.container) ids.push(ev.delta.container.id)
    expect(ids).toEqual([container])
  } else if (how === 'chat') {
    const r = await rig.client.chat.completions.create({ model, messages: ask })
    expect(r.choices[0]!.message.content).toContain('1.41421')
  } else {
    const s = await rig.client.chat.completions.create({ model, messages: ask, stream: true })
    let text = ''
    for await (const c of s) text += c.choices[0]?.delta?.content ?? ''
    expect(text).toContain('1.41421')
  }
  return container
}

/** Another key names the container every way: a 404 naming the field each time, the upstream never asked. */
async function refusedToOther(container: string) {
  const before = calls()
  for (const [given, at] of [[container, 'container'], [{ id: container }, 'container.id']] as const) {
    const err = await otherAnthropic.messages.create({ model, max_tokens: 64, messages: ask, container: given as any }).catch((e) => e)
    expect(err).toBeInstanceOf(Anthropic.NotFoundError)
    expect(String(err.message)).toContain(`${at}: Container with id '${container}' not found`)
  }
  const err = await otherOpenAI.chat.completions.create({ model, messages: ask, container } as any).catch((e) => e)
  expect(err).toBeInstanceOf(OpenAI.NotFoundError)
  expect(String(err.message)).toContain(`container: Container with id '${container}' not found`)
  expect(calls()).toBe(before)
}

/** Key A names it on both surfaces: it goes upstream as given. */
async function reusedByA(container: string) {
  rig.up.script({ json: fixture(F('nonstream-text.json')) })
  const r = await rig.anthropic.messages.create({ model, max_tokens: 64, messages: ask, container })
  expect(r.type).toBe('message')
  expect(sentContainer()).toBe(container)
  rig.up.script({ json: fixture(F('nonstream-text.json')) })
  await rig.anthropic.messages.create({ model, max_tokens: 64, messages: ask, container: { id: container, skills: [] } as any })
  expect(sentContainer()).toEqual({ id: container, skills: [] })
  rig.up.script({ json: fixture(F('nonstream-text.json')) })
  const c = await rig.client.chat.completions.create({ model, messages: ask, container } as any)
  expect(c.choices[0]!.message.content).toBeTruthy()
  expect(sentContainer()).toBe(container)
}

describe('a container handed to one key', () => {
  for (const how of ['messages', 'messages-stream', 'chat', 'chat-stream'] as const) {
    test(`by a ${how} reply: another key naming it (messages, chat; by id or { id }) gets a 404; the key it was handed to reuses it`, async () => {
      const container = await containerOfA(how)
      await refusedToOther(container)
      await reusedByA(container)
    })
  }

  test('one past the expiry its reply gave is a 404, to the key it was handed to too', async () => {
    const container = await containerOfA('messages', new Date(Date.now() - 60_000).toISOString())
    const before = calls()
    const err = await rig.anthropic.messages.create({ model, max_tokens: 64, messages: ask, container }).catch((e) => e)
    expect(err.status).toBe(404)
    expect(String(err.message)).toContain(`container: Container with id '${container}' not found`)
    expect(calls()).toBe(before)
  })

  test('a new container (none named, or an object without an id) needs no grant', async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const r = await otherAnthropic.messages.create({ model, max_tokens: 64, messages: ask, container: { skills: [] } as any })
    expect(r.type).toBe('message')
    expect(sentContainer()).toEqual({ skills: [] })
  })
})
