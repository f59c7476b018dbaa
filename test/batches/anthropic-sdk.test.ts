// Anthropic's Message Batches through `@anthropic-ai/sdk` (v1) against the mock provider:
// messages.batches.create / retrieve / list / cancel / results / delete, on the same engine
// and generation records as the OpenAI-shaped batches; x-api-key as @ai-sdk/anthropic sends it.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { msg, recordsOf, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
let client: Anthropic
beforeAll(async () => {
  rig = await startBatchRig({ upstream: false })
  client = rig.anthropic()
})
afterAll(() => rig.stop())

async function ended(id: string) {
  for (let i = 0; i < 1000; i++) {
    const b = await client.messages.batches.retrieve(id)
    if (b.processing_status === 'ended') return b
    await Bun.sleep(15)
  }
  throw new Error('message batch did not end')
}

test('create → retrieve until ended → results (JSONL at the absolute results_url)', async () => {
  const batch = await client.messages.batches.create({
    requests: [
      { custom_id: 'hello', params: { model: 'mock-claude', max_tokens: 100, messages: [{ role: 'user', content: 'mock: text Bonjour' }] } },
      { custom_id: 'gpt', params: { model: 'mock-gpt', max_tokens: 100, messages: [{ role: 'user', content: 'Hi from GPT' }] } },
      { custom_id: 'broken', params: { model: 'mock-claude', max_tokens: 100, messages: [{ role: 'user', content: 'mock: error 400' }] } },
      { custom_id: 'streamed', params: { model: 'mock-claude', max_tokens: 100, stream: true as any, messages: [{ role: 'user', content: 'mock: text streamed' }] } },
    ],
  })
  expect(batch.id).toMatch(/^msgbatch_/)
  expect(batch.type).toBe('message_batch')
  expect(batch.processing_status).toBe('in_progress')
  expect(batch.results_url).toBeNull()
  expect(new Date(batch.expires_at).getTime() - new Date(batch.created_at).getTime()).toBe(86_400_000)

  const done = await ended(batch.id)
  expect(done.request_counts).toEqual({ processing: 0, succeeded: 3, errored: 1, canceled: 0, expired: 0 })
  expect(done.ended_at).not.toBeNull()
  expect(done.results_url).toBe(`${rig.gw.url}/api/beta/v1/messages/batches/${batch.id}/results`)

  const results: Anthropic.Messages.MessageBatchIndividualResponse[] = []
  for await (const r of await client.messages.batches.results(batch.id)) results.push(r)
  const by = Object.fromEntries(results.map((r) => [r.custom_id, r.result]))
  expect(Object.keys(by).sort()).toEqual(['broken', 'gpt', 'hello', 'streamed'])
  expect(by.hello!.type).toBe('succeeded')
  if (by.hello!.type === 'succeeded') {
    expect(by.hello!.message.content).toEqual([{ type: 'text', text: 'Bonjour' }] as any)
    expect(by.hello!.message.id).toMatch(/^msg_/)
  }
  if (by.gpt!.type === 'succeeded') expect(by.gpt!.message.content[0]).toMatchObject({ type: 'text', text: 'Hi from GPT' })
  else throw new Error('gpt item failed')
  expect(by.streamed!.type).toBe('succeeded')
  expect(by.broken).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('mock') } } })

  // the same records as interactive traffic, each with the batch id
  const recs = (await recordsOf(rig, batch.id))
  expect(recs).toHaveLength(4)
  expect(recs.every((r) => r.endpoint === 'anthropic.messages')).toBe(true)
})

test('list pages newest first with limit, after_id and before_id; another key sees none', async () => {
  const ids: string[] = []
  for (let i = 0; i < 3; i++) ids.push((await client.messages.batches.create({ requests: [{ custom_id: `l${i}`, params: msg('mock-claude', `list ${i}`) as any }] })).id)
  const page = await client.messages.batches.list({ limit: 2 })
  expect(page.data.map((b) => b.id)).toEqual([ids[2], ids[1]])
  expect(page.has_more).toBe(true)
  const all: string[] = []
  for await (const b of client.messages.batches.list({ limit: 2 })) all.push(b.id)
  for (const id of ids) expect(all).toContain(id)
  expect(new Set(all).size).toBe(all.length)
  const before = await client.messages.batches.list({ before_id: ids[0], limit: 10 })
  expect(before.data.map((b) => b.id)).toEqual([ids[2], ids[1]])
  expect((await rig.anthropic(rig.otherKey).messages.batches.list()).data).toEqual([])
  // only message batches are listed here
  await rig.call('POST', '/api/v1/batches', { requests: [{ model: 'mock-gpt', messages: [{ role: 'user', content: 'x' }] }] })
  expect((await client.messages.batches.list({ limit: 1000 })).data.every((b) => b.id.startsWith('msgbatch_'))).toBe(true)
  // and the OpenAI SDK's root lists OpenAI batches only (a message batch has no input or output
  // file, which its client would look for); the unified root lists both
  const listed: string[] = []
  for await (const b of rig.openai(undefined, 'alpha/v1').batches.list({ limit: 100 })) listed.push(b.id)
  expect(listed.length).toBeGreaterThan(0)
  expect(listed.some((id) => id.startsWith('msgbatch_'))).toBe(false)
  const unified: string[] = []
  for await (const b of rig.openai(undefined, 'v1').batches.list({ limit: 100 })) unified.push(b.id)
  expect(unified).toEqual(expect.arrayContaining([...ids, ...listed]))
})

test('cancel: canceling while in-flight items finish, then ended with canceled results; results before the end are refused', async () => {
  const batch = await client.messages.batches.create({
    requests: Array.from({ length: 400 }, (_, i) => ({ custom_id: `c${i}`, params: msg('mock-claude', `mock: text c${i}`) as any })),
  })
  const c = await client.messages.batches.cancel(batch.id)
  expect(c.cancel_initiated_at).not.toBeNull()
  expect(['canceling', 'ended']).toContain(c.processing_status)
  if (c.processing_status === 'canceling') {
    // refused until it ends (it may end in the meantime: then the results are there)
    const early = await client.messages.batches.results(batch.id).then(() => 'ended', (e) => e.message as string)
    if (early === 'ended') expect((await client.messages.batches.retrieve(batch.id)).processing_status).toBe('ended')
    else expect(early).toContain('results_url')
  }
  const done = await ended(batch.id)
  expect(done.request_counts.canceled).toBeGreaterThan(0)
  expect(done.request_counts.succeeded + done.request_counts.canceled).toBe(400)
  const types = new Set<string>()
  for await (const r of await client.messages.batches.results(batch.id)) types.add(r.result.type)
  expect(types.has('canceled')).toBe(true)
  // cancelling an ended batch is a 400
  expect(await client.messages.batches.cancel(batch.id).then(() => 200, (e) => e.status)).toBe(400)
})

test('a cancel racing the start of the batch wins: never back to in_progress, never ended as if it had completed (20 at once)', async () => {
  const ids = await Promise.all(
    Array.from({ length: 20 }, async (_, b) => {
      const batch = await client.messages.batches.create({
        requests: Array.from({ length: 30 }, (_, i) => ({ custom_id: `r${b}-${i}`, params: msg('mock-claude', `mock: text ${i}`) as any })),
      })
      const c = await client.messages.batches.cancel(batch.id)
      expect(['canceling', 'ended']).toContain(c.processing_status)
      return batch.id
    }),
  )
  for (const id of ids) {
    expect((await client.messages.batches.retrieve(id)).processing_status).not.toBe('in_progress')
    const done = await ended(id)
    expect(done.cancel_initiated_at).not.toBeNull()
    expect(done.request_counts.succeeded + done.request_counts.canceled + done.request_counts.errored).toBe(30)
  }
})

test('delete: only an ended batch; then it is gone', async () => {
  const batch = await client.messages.batches.create({ requests: [{ custom_id: 'd', params: msg('mock-claude', 'bye') as any }] })
  await ended(batch.id)
  expect(await client.messages.batches.delete(batch.id)).toEqual({ id: batch.id, type: 'message_batch_deleted' })
  expect(await client.messages.batches.retrieve(batch.id).then(() => 200, (e) => e.status)).toBe(404)
})

test('x-api-key and the Anthropic version header, as @ai-sdk/anthropic sends them; another key gets 404', async () => {
  const batch = await client.messages.batches.create({ requests: [{ custom_id: 'k', params: msg('mock-claude', 'k') as any }] })
  const res = await fetch(`${rig.gw.url}/api/beta/v1/messages/batches/${batch.id}`, { headers: { 'x-api-key': rig.gw.key, 'anthropic-version': '2023-06-01' } })
  expect(res.status).toBe(200)
  expect(((await res.json()) as any).id).toBe(batch.id)
  const other = await fetch(`${rig.gw.url}/api/beta/v1/messages/batches/${batch.id}/results`, { headers: { 'x-api-key': rig.otherKey } })
  expect(other.status).toBe(404)
})
