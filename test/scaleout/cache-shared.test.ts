// The response cache shared by three instances on one Redis (and one S3 bucket for large
// bodies): an answer one instance got from the upstream is a hit on the two others, recorded
// there as cached at cost 0; the store stays under its bound whichever instance stores, and an
// evicted body leaves S3; DELETE /admin/v1/cache on one empties it for all. Runs on the shared
// stores only (SWITCHYARD_TEST_SHARED=1 with SWITCHYARD_TEST_REDIS_URL; S3 when
// SWITCHYARD_TEST_S3_ENDPOINT is set too).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { S3Client } from 'bun'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts'
import { freshBucket, TEST_S3_ENDPOINT } from '../helpers/s3.ts'
import { onSharedStores, startGateway, type Gateway } from '../helpers/server.ts'

const skip = !onSharedStores || !TEST_REDIS_URL
if (skip) console.log('test/scaleout/cache-shared.test.ts: skipped, needs SWITCHYARD_TEST_SHARED=1 and SWITCHYARD_TEST_REDIS_URL')

const ADMIN = 'admin-token-cache-shared'
const TEXT = fixture('openai/chat/nonstream-text.json')
const cached = { headers: { 'x-switchyard-cache': '60' } }

let up: FakeUpstream
let s3: S3Client | undefined
const gws: Gateway[] = []

beforeAll(async () => {
  if (skip) return
  up = await startFakeUpstream()
  const small = (n: number) =>
    JSON.stringify({
      id: `chatcmpl-${n}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', system_fingerprint: 'x'.repeat(800 + 10 * n),
      choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 },
    })
  up.script((r) => {
    const said = String(r.json().messages[0].content)
    return { json: said === 'hi' ? TEXT : small(Number(said)) }
  })
  const bucket = TEST_S3_ENDPOINT ? await freshBucket() : undefined
  s3 = bucket?.client
  const env = { SWITCHYARD_ADMIN_TOKEN: ADMIN, REDIS_URL: TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: freshPrefix(), ...bucket?.env }
  const yaml = `
providers: [{ id: openai, kind: openai, base_url: ${up.url}/v1, api_key: sk-o, max_retries: 0 }]
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
cache: { max_bytes: 4096, s3_above_bytes: 2000 }
`
  for (let i = 0; i < 3; i++) gws.push(await startGateway({ env, yaml }))
})

afterAll(async () => {
  await Promise.all(gws.map((g) => g.stop()))
  await up?.stop()
})

const sdk = (g: Gateway) => new OpenAI({ baseURL: `${g.url}/api/alpha/v1`, apiKey: g.key, maxRetries: 0 })
const say = async (g: Gateway, content: string) =>
  (await sdk(g).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }, cached).withResponse()).response.headers.get('x-switchyard-cache')
const admin = (g: Gateway, init: RequestInit = {}) => fetch(`${g.url}/admin/v1/cache`, { ...init, headers: { authorization: `Bearer ${ADMIN}` } })
const stats = async (g: Gateway) => (await (await admin(g)).json()) as { store: string; entries: number; bytes: number; max_bytes: number }
const inS3 = async () => (s3 ? ((await s3.list({ prefix: 'cache/' })).contents ?? []).length : 0)

async function until(ok: () => Promise<boolean>, ms = 5_000) {
  const end = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('timed out')
    await Bun.sleep(20)
  }
}

describe.skipIf(skip)('the response cache on three instances sharing Redis', () => {
  test('an answer stored by one is a hit on the others, recorded there as cached at cost 0; a large body is kept in S3', async () => {
    const [a, b, c] = gws as [Gateway, Gateway, Gateway]
    expect((await stats(a)).store).toBe('redis')
    expect(await say(a, 'hi')).toBe('miss')
    await until(async () => (await stats(c)).entries === 1)
    if (s3) expect(await inS3()).toBe(1)

    const onB = await sdk(b).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, cached).withResponse()
    expect(onB.response.headers.get('x-switchyard-cache')).toBe('hit')
    expect(await say(c, 'hi')).toBe('hit')
    expect(up.requests.length).toBe(1)
    const rec = await fetch(`${b.url}/api/v1/generations?id=${onB.data.id}`, { headers: { authorization: `Bearer ${b.key}` } })
    const g = ((await rec.json()) as { generation: Record<string, any> }).generation
    expect(g).toMatchObject({ cached: true, cost: 0 })
  })

  test('stores on every instance stay under the one bound, the answer used longest ago going first (its S3 body too)', async () => {
    const [a, b, c] = gws as [Gateway, Gateway, Gateway]
    // 'hi' (2.7 KB, in S3) was used last before these three small ones (1.1 KB each): the second pushes it out
    for (const [i, g] of [a, b, c].entries()) {
      const before = (await stats(a)).bytes
      expect(await say(g, String(i + 1))).toBe('miss')
      await until(async () => (await stats(a)).bytes !== before)
      const s = await stats(b)
      expect(s.bytes).toBeLessThanOrEqual(s.max_bytes)
    }
    await until(async () => (await stats(c)).entries === 3)
    if (s3) await until(async () => (await inS3()) === 0)
    expect(await say(b, '1')).toBe('hit')
    expect(await say(c, '2')).toBe('hit')
    expect(await say(a, '3')).toBe('hit')
  })

  test('DELETE /admin/v1/cache on one instance empties it for all, S3 bodies included', async () => {
    const [a, b, c] = gws as [Gateway, Gateway, Gateway]
    expect(await say(a, 'hi')).toBe('miss')
    if (s3) await until(async () => (await inS3()) === 1)
    await until(async () => (await stats(c)).entries >= 2)
    const res = await admin(b, { method: 'DELETE' })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { deleted: number }).deleted).toBeGreaterThanOrEqual(2)
    expect(await stats(c)).toMatchObject({ entries: 0, bytes: 0 })
    if (s3) expect(await inS3()).toBe(0)
    expect(await say(c, 'hi')).toBe('miss')
  })
})
