// The file and batch routes of both families, and a generation's lookup by id, take the query
// parameters they name and each once: any other, or one given twice, is a 400 naming it. A
// misspelt parameter (`limt`, `ofset`) answered a default page, and `id=a&id=b` read `a`,
// without a word, where the usage report and the generations listing said so.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
let fileId: string
let batchId: string
let generationId: string
let messageBatchId: string

const get = (path: string, method = 'GET') => fetch(gw.url + path, { method, headers: { authorization: `Bearer ${gw.key}` } })
const anthropic = () => new Anthropic({ apiKey: gw.key, baseURL: gw.url + '/api/beta' })

async function expect400(path: string, names: string, method = 'GET') {
  const r = await get(path, method)
  const text = await r.text()
  if (r.status !== 400) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 200)}`)
  expect(r.headers.get('x-request-id')).toBeTruthy()
  expect(JSON.parse(text).error).toStartWith(names + ':')
}

beforeAll(async () => {
  // many quick requests of one key: the burst guard is not what this tests
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '100000', SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_IP_RPM: '100000' } })
  const client = new OpenAI({ apiKey: gw.key, baseURL: gw.url + '/api/alpha/v1' })
  const line = JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] } })
  const file = await client.files.create({ file: new File([line + '\n'], 'in.jsonl'), purpose: 'batch' })
  fileId = file.id
  batchId = (await client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).id
  generationId = (await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: 'hi' }] })).id
  messageBatchId = (await anthropic().messages.batches.create({ requests: [{ custom_id: 'a', params: { model: 'mock-claude', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } }] })).id
})
afterAll(async () => {
  await gw.stop()
})

test('what the OpenAI SDK sends still lists, pages and reads', async () => {
  const client = new OpenAI({ apiKey: gw.key, baseURL: gw.url + '/api/alpha/v1' })
  expect((await client.files.list({ purpose: 'batch', limit: 5, order: 'asc' })).data.map((f) => f.id)).toEqual([fileId])
  expect((await client.batches.list({ limit: 5 })).data.map((b) => b.id)).toEqual([batchId])
  expect((await client.files.retrieve(fileId)).id).toBe(fileId)
  for (const root of ['/api/v1', '/api/alpha/v1']) {
    expect((await get(`${root}/batches/${batchId}/results?offset=0&limit=10`)).status).toBe(200)
    expect((await get(`${root}/batches/${batchId}/export?format=ndjson&gzip=false&offset=0&limit=10`)).status).toBe(200)
  }
  expect((await get(`/api/v1/generations?id=${generationId}`)).status).toBe(200)
})

test('a parameter a route does not take is a 400 naming it, on both OpenAI roots', async () => {
  for (const root of ['/api/v1', '/api/alpha/v1']) {
    await expect400(`${root}/files?limt=1`, 'limt')
    await expect400(`${root}/files?before=x`, 'before')
    await expect400(`${root}/files/${fileId}?purpose=batch`, 'purpose')
    await expect400(`${root}/files/${fileId}/content?x=1`, 'x')
    await expect400(`${root}/files/${fileId}?force=1`, 'force', 'DELETE')
    await expect400(`${root}/batches?offset=1`, 'offset')
    await expect400(`${root}/batches/${batchId}?verbose=1`, 'verbose')
    await expect400(`${root}/batches/${batchId}/cancel?now=1`, 'now', 'POST')
    await expect400(`${root}/batches/${batchId}/results?ofset=1`, 'ofset')
    await expect400(`${root}/batches/${batchId}/export?gz=1`, 'gz')
    // names an object's own properties could take are parameters like any other
    await expect400(`${root}/files?__proto__=1`, '__proto__')
    await expect400(`${root}/batches/${batchId}/results?constructor=1`, 'constructor')
  }
  await expect400(`/api/v1/generations?id=${generationId}&model=mock-gpt`, 'model')
  // the file is still there: a refused delete deleted nothing
  expect((await get(`/api/v1/files/${fileId}`)).status).toBe(200)
})

test('what the Anthropic SDK sends still lists, pages and reads (its `beta=true` of older versions too)', async () => {
  const client = anthropic()
  expect((await client.beta.files.list({ limit: 5 })).data.map((f) => f.id)).toContain(fileId)
  expect((await client.beta.files.retrieveMetadata(fileId)).id).toBe(fileId)
  expect((await client.messages.batches.list({ limit: 5 })).data.map((b) => b.id)).toEqual([messageBatchId])
  expect((await client.messages.batches.retrieve(messageBatchId)).id).toBe(messageBatchId)
  const ids = await get(`/api/beta/v1/files?ids[]=${fileId}&ids[]=file-nope&beta=true`)
  expect(ids.status).toBe(200)
  for (const path of [`/api/beta/v1/files?beta=true&limit=1`, `/api/beta/v1/files/${fileId}?beta=true`, `/api/beta/v1/files/${fileId}/content?beta=true`, `/api/beta/v1/messages/batches?beta=true&limit=2&after_id=${messageBatchId}`, `/api/beta/v1/messages/batches/${messageBatchId}?beta=true`]) {
    const r = await get(path)
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  }
})

test('on the Anthropic routes too, a parameter they do not take, or one twice, is a 400 naming it', async () => {
  await expect400('/api/beta/v1/files?limt=1', 'limt')
  await expect400('/api/beta/v1/files?after=x', 'after')
  await expect400('/api/beta/v1/files?limit=1&limit=2', 'limit')
  await expect400(`/api/beta/v1/files/${fileId}?purpose=batch`, 'purpose')
  await expect400(`/api/beta/v1/files/${fileId}/content?x=1`, 'x')
  await expect400(`/api/beta/v1/files/${fileId}?force=1`, 'force', 'DELETE')
  await expect400('/api/beta/v1/messages/batches?after=x', 'after')
  await expect400('/api/beta/v1/messages/batches?limit=1&limit=2', 'limit')
  await expect400(`/api/beta/v1/messages/batches/${messageBatchId}?verbose=1`, 'verbose')
  await expect400(`/api/beta/v1/messages/batches/${messageBatchId}/results?offset=1`, 'offset')
  await expect400(`/api/beta/v1/messages/batches/${messageBatchId}/cancel?now=1`, 'now', 'POST')
  await expect400(`/api/beta/v1/messages/batches/${messageBatchId}?force=1`, 'force', 'DELETE')
  expect((await anthropic().beta.files.retrieveMetadata(fileId)).id).toBe(fileId)
  expect((await anthropic().messages.batches.retrieve(messageBatchId)).id).toBe(messageBatchId)
})

test('a parameter given twice is a 400 naming it: the second value was ignored', async () => {
  await expect400('/api/v1/files?limit=1&limit=2', 'limit')
  await expect400('/api/alpha/v1/files?order=asc&order=desc', 'order')
  await expect400('/api/v1/batches?limit=1&limit=50', 'limit')
  await expect400(`/api/v1/batches/${batchId}/results?offset=0&offset=1`, 'offset')
  await expect400(`/api/alpha/v1/batches/${batchId}/export?format=zip&format=ndjson`, 'format')
  await expect400(`/api/v1/generations?id=${generationId}&id=chatcmpl-other`, 'id')
})

test('an unknown name is echoed cut, as any value in an error', async () => {
  const r = await get(`/api/v1/files?${'q'.repeat(5000)}=1`)
  expect(r.status).toBe(400)
  expect((await r.text()).length).toBeLessThan(600)
})
