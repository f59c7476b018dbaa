// Exports: NDJSON (the default), gzipped NDJSON and a ZIP of results.jsonl,
// errors.jsonl and batch.json, read back by independent readers — node:zlib's gunzip and
// jszip — and equal, line for line, to the results route; offset and limit honoured.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import JSZip from 'jszip'
import { gunzipSync } from 'node:zlib'
import { chat, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
let id: string
let results: any[]
beforeAll(async () => {
  rig = await startBatchRig({ upstream: false })
  // 60 mock items, every seventh an upstream error (no retries for a 400)
  const requests = Array.from({ length: 60 }, (_, i) => ({ custom_id: `c${i}`, ...chat(i % 2 ? 'mock-gpt' : 'mock-claude', i % 7 === 3 ? 'mock: error 400' : `mock: text line ${i} ünï 🚀`) }))
  const res = await rig.call('POST', '/api/v1/batches', { requests })
  id = ((await res.json()) as any).id
  await rig.ended(id)
  results = await rig.allResults(id)
})
afterAll(() => rig.stop())

const get = (q: string, key?: string) => rig.call('GET', `/api/v1/batches/${id}/export${q}`, undefined, key)
const lines = (text: string) => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))

test('NDJSON is the default: one item result per line, equal to the results route', async () => {
  const res = await get('')
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('application/x-ndjson')
  expect(res.headers.get('content-disposition')).toContain(`${id}_results.jsonl`)
  // the batch's status as the export began: a running one's export holds only the items ended so far
  expect(res.headers.get('x-switchyard-batch-status')).toBe('completed')
  // the items' prompts and replies: no cache (a browser's too) keeps a copy
  expect(res.headers.get('cache-control')).toBe('no-store')
  const text = await res.text()
  expect(text.endsWith('\n')).toBe(true)
  expect(lines(text)).toEqual(results)
  expect(results.filter((r) => r.status === 'failed')).toHaveLength(9)
  expect(results.find((r) => r.index === 4).result.choices[0].message.content).toBe('line 4 ünï 🚀')
})

test('gzip=true: a gzip stream that gunzip reads back to the same NDJSON', async () => {
  const res = await get('?format=ndjson&gzip=true')
  expect(res.headers.get('content-type')).toBe('application/gzip')
  expect(res.headers.get('content-disposition')).toContain('.jsonl.gz')
  const raw = new Uint8Array(await res.arrayBuffer())
  expect([raw[0], raw[1]]).toEqual([0x1f, 0x8b])
  expect(lines(gunzipSync(raw).toString('utf8'))).toEqual(results)
})

test('format=zip: results.jsonl, errors.jsonl and batch.json, read by jszip', async () => {
  const res = await get('?format=zip')
  expect(res.headers.get('content-type')).toBe('application/zip')
  const zip = await JSZip.loadAsync(await res.arrayBuffer())
  expect(Object.keys(zip.files).sort()).toEqual(['batch.json', 'errors.jsonl', 'results.jsonl'])
  expect(lines(await zip.file('results.jsonl')!.async('string'))).toEqual(results.filter((r) => r.status === 'succeeded'))
  expect(lines(await zip.file('errors.jsonl')!.async('string'))).toEqual(results.filter((r) => r.status === 'failed'))
  const batch = JSON.parse(await zip.file('batch.json')!.async('string'))
  expect(batch).toMatchObject({ id, object: 'batch', status: 'completed', request_counts: { total: 60, completed: 51, failed: 9 } })
})

test('offset and limit pick the same index window in every format', async () => {
  const want = results.filter((r) => r.index >= 10 && r.index < 35)
  expect(lines(await (await get('?offset=10&limit=25')).text())).toEqual(want)
  expect(lines(gunzipSync(new Uint8Array(await (await get('?gzip=true&offset=10&limit=25')).arrayBuffer())).toString('utf8'))).toEqual(want)
  const zip = await JSZip.loadAsync(await (await get('?format=zip&offset=10&limit=25')).arrayBuffer())
  expect(lines(await zip.file('results.jsonl')!.async('string'))).toEqual(want.filter((r) => r.status === 'succeeded'))
  expect(lines(await zip.file('errors.jsonl')!.async('string'))).toEqual(want.filter((r) => r.status === 'failed'))
  // past the end: an empty export, not an error
  expect(await (await get('?offset=1000')).text()).toBe('')
  const empty = await JSZip.loadAsync(await (await get('?format=zip&offset=1000')).arrayBuffer())
  expect(await empty.file('results.jsonl')!.async('string')).toBe('')
})

test('bad export parameters are 400s naming the parameter; another key gets a 404', async () => {
  for (const [q, name] of [
    ['?format=csv', 'format'],
    ['?gzip=maybe', 'gzip'],
    ['?format=zip&gzip=true', 'gzip'],
    ['?offset=-1', 'offset'],
    ['?limit=0', 'limit'],
    ['?limit=1e3', 'limit'],
  ] as const) {
    const res = await get(q)
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error).toStartWith(`${name}:`)
  }
  expect((await get('', rig.otherKey)).status).toBe(404)
})

test('an export is a stream: a client that reads one chunk and leaves does not get the whole file', async () => {
  const res = await get('')
  const reader = res.body!.getReader()
  const first = await reader.read()
  expect(first.done).toBe(false)
  await reader.cancel()
})

test('a batch deleted while its results download ends the download with an error, never a short answer that looks whole', async () => {
  // results of about 20 MB, more than the sockets and the client hold, so the download is still
  // under way when the delete comes
  const text = 'lorem ipsum '.repeat(800)
  const requests = Array.from({ length: 2_000 }, (_, i) => ({ custom_id: `d${i}`, params: { model: 'mock-claude', max_tokens: 4_000, messages: [{ role: 'user', content: `mock: text ${i} ${text}` }] } }))
  const created = await rig.call('POST', '/api/beta/v1/messages/batches', { requests })
  expect(created.status).toBe(200)
  const batch = ((await created.json()) as { id: string }).id
  await rig.ended(batch, undefined, 60_000)
  // the whole set, read before the delete
  const whole = new Uint8Array(await (await rig.call('GET', `/api/beta/v1/messages/batches/${batch}/results`)).arrayBuffer())
  expect(new TextDecoder().decode(whole).split('\n').filter((l) => l !== '')).toHaveLength(2_000)
  const res = await rig.call('GET', `/api/beta/v1/messages/batches/${batch}/results`)
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let received = (await reader.read()).value!.byteLength
  const del = await rig.call('DELETE', `/api/beta/v1/messages/batches/${batch}`)
  expect(del.status).toBe(200)
  const rest = (async () => {
    for (;;) {
      const r = await reader.read()
      if (r.done) return 'ended cleanly'
      received += r.value.byteLength
    }
  })().catch(() => 'failed')
  // either it failed, or it had already been sent whole before the delete took hold
  const how = await rest
  if (how === 'ended cleanly') expect(received).toBe(whole.byteLength)
  else expect(how).toBe('failed')
}, 90_000)
