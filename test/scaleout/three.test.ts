// Scale-out as a whole: three gateway processes (`cluster: true`), each with a data dir
// of its own, on one PostgreSQL database, one Redis and one S3 bucket (s3rver), behind no
// balancer: requests are spread round-robin. Limits and credits stay exact, a file and a
// responses thread made on one are used on the others, and a 5,000-item batch is worked by
// all three while one is killed with kill -9: every item ends with exactly one result and
// none goes upstream twice. Needs SWITCHYARD_TEST_DATABASE_URL, SWITCHYARD_TEST_REDIS_URL and
// SWITCHYARD_TEST_S3_ENDPOINT (.ci/run sets all three).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import OpenAI from 'openai'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts'
import { freshBucket, TEST_S3_ENDPOINT } from '../helpers/s3.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'
import { NO_LIMITS, replayFixtures } from '../batches/helpers.ts'

const missing = [!onPostgres && 'SWITCHYARD_TEST_DATABASE_URL', !TEST_REDIS_URL && 'SWITCHYARD_TEST_REDIS_URL', !TEST_S3_ENDPOINT && 'SWITCHYARD_TEST_S3_ENDPOINT'].filter(Boolean)
const skip = missing.length > 0
if (skip) console.log(`test/scaleout/three.test.ts: skipped, ${missing.join(', ')} unset (.ci/run sets them)`)

const ADMIN = 'admin-token-three-instances'
const N = 5_000
const schema = 'sy_t_three_' + process.pid
// gpt-4o at list prices; the fake holds these answers 150 ms, so a whole burst is admitted
// before the first one is recorded
const CREDIT_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
const CREDIT_COST = (10 * 2.5 + 5 * 10) / 1e6

let up: FakeUpstream
let sent: Map<string, number>
let db: SQL
const gws: Spawned[] = []
const dirs: string[] = []
let bootstrap = ''

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

const sdk = (g: Spawned, key = bootstrap) => new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
const json = { 'content-type': 'application/json' }

async function adminKey(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${gws[0]!.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, ...json }, body: JSON.stringify(body) })
  expect(res.status).toBe(201)
  return ((await res.json()) as { key: string }).key
}

function chat(g: Spawned, key: string, model: string, content: string) {
  return fetch(`${g.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...json },
    body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: 'user', content }] }),
  })
}

beforeAll(async () => {
  if (skip) return
  const url = await freshSchema(schema)
  db = new SQL({ url, max: 1 })
  up = await startFakeUpstream()
  sent = replayFixtures(up, {
    delayMs: 2,
    special: (prompt) =>
      prompt.startsWith('credit ')
        ? { waitMs: prompt.startsWith('credit batch') ? 500 : 150, json: { id: 'chatcmpl-credit', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: CREDIT_USAGE } }
        : undefined,
  })
  const { env: s3 } = await freshBucket()
  bootstrap = 'sk-sy-three-' + crypto.randomUUID().replaceAll('-', '')
  const env = {
    ...NO_LIMITS,
    ...s3,
    SWITCHYARD_CLUSTER: 'true',
    SWITCHYARD_DATABASE_URL: url,
    REDIS_URL: TEST_REDIS_URL!,
    SWITCHYARD_REDIS_PREFIX: freshPrefix(),
    SWITCHYARD_BOOTSTRAP_KEY: bootstrap,
    SWITCHYARD_ADMIN_TOKEN: ADMIN,
    SWITCHYARD_BATCH_LEASE_MS: '2000',
    OPENAI_API_KEY: 'sk-upstream-secret',
    OPENAI_BASE_URL: up.url,
  }
  // a data dir each: nothing is shared through the local disk
  for (let i = 0; i < 3; i++) dirs.push(tempDir('switchyard-three-'))
  gws.push(...(await Promise.all(dirs.map((dataDir) => spawnGateway({ env, dataDir })))))
}, 60_000)

afterAll(async () => {
  if (skip) return
  for (const g of gws) {
    g.kill('SIGTERM')
    await g.exited
  }
  await db.close()
  await up.stop()
  for (const d of dirs) cleanup(d)
  await dropSchema(schema)
})

describe.skipIf(skip)('three gateway processes on PostgreSQL + Redis + S3', () => {
  test('each says so at start: cluster mode on the shared stores', () => {
    for (const g of gws) expect(g.output()).toMatch(/postgres/i)
    for (const g of gws) expect(g.output()).toMatch(/redis/i)
    for (const g of gws) expect(g.output()).toMatch(/s3/i)
  })

  test('a key with --rpm 30 gets exactly 30 successes across all three (90 at once, round-robin)', async () => {
    const key = await adminKey({ name: 'rpm30', rpm: 30 })
    const res = await Promise.all(Array.from({ length: 90 }, (_, i) => chat(gws[i % 3]!, key, 'mock-gpt', 'mock: text ok')))
    const statuses = res.map((r) => r.status)
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])
    expect(statuses.filter((s) => s === 200).length).toBe(30)
    for (const g of gws) expect((await chat(g, key, 'mock-gpt', 'mock: text again')).status).toBe(429)
  })

  test('a key funded for 10 requests gets at most 11 across all three (90 at once)', async () => {
    const key = await adminKey({ name: 'ten', credits: CREDIT_COST * 10 })
    const res = await Promise.all(Array.from({ length: 90 }, (_, i) => chat(gws[i % 3]!, key, 'gpt-4o', `credit ${i}`)))
    const statuses = res.map((r) => r.status)
    expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([])
    const served = statuses.filter((s) => s === 200).length
    expect(served).toBeLessThanOrEqual(11)
    // each reservation bounds its prompt from above (its UTF-8 bytes), so a burst may stop
    // before the sequential count, never after it
    expect(served).toBeGreaterThanOrEqual(1)
    // what the burst left is served one request at a time until the balance crosses zero
    // (a reply is sent before its cost replaces its reservation in Redis, so a 402 naming credit
    // still held may be the previous reply's reservation: it is asked again once that settled)
    let total = served
    for (let i = 0; i < 20; i++) {
      let r = await chat(gws[i % 3]!, key, 'gpt-4o', `credit after ${i}`)
      if (r.status === 402 && /held by requests in progress/.test(await r.clone().text())) {
        await Bun.sleep(300)
        r = await chat(gws[i % 3]!, key, 'gpt-4o', `credit after ${i}`)
      }
      if (r.status === 402) break
      expect(r.status).toBe(200)
      total++
    }
    expect(total).toBeLessThanOrEqual(11)
    for (const g of gws) expect((await chat(g, key, 'gpt-4o', 'credit after')).status).toBe(402)
  })

  test("a funded key's batch worked by all three spends what it covers, not that on each: 10 or 11 of 60 items for 10 requests' credit", async () => {
    const key = await adminKey({ name: 'batch-ten', credits: CREDIT_COST * 10 })
    const requests = Array.from({ length: 60 }, (_, i) => ({ custom_id: `f${i}`, model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: `credit batch ${i}` }] }))
    // a few at a time per instance, each answered after half a second, so that the others
    // (which look for open batches about every 0.7 s) take part before the credit is held
    const res = await fetch(`${gws[0]!.url}/api/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...json }, body: JSON.stringify({ requests, settings: { concurrency: 3 } }) })
    expect(res.status).toBe(200)
    const { id } = (await res.json()) as { id: string }
    // once spent, the key is refused at the door (402), its batch too: read it as the operator
    type Row = { status: string; total: number; succeeded: number; failed: number }
    const view = async () => ((await db.unsafe('SELECT status, total::int AS total, succeeded::int AS succeeded, failed::int AS failed FROM batches WHERE id = $1', [id])) as Row[])[0]!
    await until('the funded batch ends', async () => (await view()).status === 'completed', 60_000)
    const b = await view()
    expect(b.total).toBe(60)
    // an item refused while the key's credit is held elsewhere waits for those holds to end at
    // their real cost: the covered ten all run, and at most the one that crosses zero beside them
    expect(b.succeeded).toBeGreaterThanOrEqual(10)
    expect(b.succeeded).toBeLessThanOrEqual(11)
    // all three took items (those refused for credit too)
    const owners = (await db.unsafe('SELECT count(DISTINCT lease_owner)::int AS n FROM batch_items WHERE batch_id = $1', [id])) as { n: number }[]
    expect(owners[0]!.n).toBeGreaterThan(1)
    const failed = (await db.unsafe("SELECT error FROM batch_items WHERE batch_id = $1 AND status = 'failed'", [id])) as { error: string }[]
    expect(failed.length).toBe(60 - b.succeeded)
    for (const f of failed) expect(JSON.parse(f.error).code).toBe('insufficient_credits')
  })

  test('a file uploaded through one is listed, downloaded and deleted through the others', async () => {
    const [a, b, c] = gws as [Spawned, Spawned, Spawned]
    const text = 'bytes through S3\n'.repeat(1000)
    const file = await sdk(a).files.create({ file: new File([text], 'three.txt'), purpose: 'user_data' })
    expect((await sdk(b).files.list()).data.map((f) => f.id)).toContain(file.id)
    expect(await (await sdk(c).files.content(file.id)).text()).toBe(text)
    expect((await sdk(b).files.delete(file.id)).deleted).toBe(true)
    for (const g of [a, c]) expect(await sdk(g).files.retrieve(file.id).then(() => 200, (e) => e.status)).toBe(404)
  })

  test('a responses thread started on one continues on another', async () => {
    const [a, b, c] = gws as [Spawned, Spawned, Spawned]
    const first = await sdk(a).responses.create({ model: 'gpt-4o-mini', input: 'first turn, on the first instance' })
    const second = await sdk(b).responses.create({ model: 'gpt-4o-mini', input: 'second turn, on the second', previous_response_id: first.id })
    // the second upstream call carried the first turn: the thread came from the database
    const upstream = up.requests.filter((r) => r.path.endsWith('/responses')).at(-1)!.body
    expect(upstream).toContain('first turn, on the first instance')
    expect(upstream).toContain('second turn, on the second')
    const third = await sdk(c).responses.create({ model: 'gpt-4o-mini', input: 'third, on the third', previous_response_id: second.id })
    expect(third.status).toBe('completed')
    expect(up.requests.filter((r) => r.path.endsWith('/responses')).at(-1)!.body).toContain('first turn, on the first instance')
  })

  test('a 5,000-item batch made on one is worked by all three; one is killed with kill -9 halfway: one result per item, none sent twice', async () => {
    const [a, b, c] = gws as [Spawned, Spawned, Spawned]
    const lines = Array.from({ length: N }, (_, i) =>
      JSON.stringify({ custom_id: `item-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `batch ${i}` }] } }),
    )
    const input = await sdk(a).files.create({ file: new File([lines.join('\n') + '\n'], 'five-thousand.jsonl'), purpose: 'batch' })
    const batch = await sdk(a).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
    const owners = async () => (await db.unsafe('SELECT lease_owner AS o, count(*)::int AS n FROM batch_items WHERE batch_id = $1 AND status IS NOT NULL GROUP BY 1', [batch.id])) as { o: string | null; n: number }[]
    const done = async () => (await owners()).reduce((s, r) => s + r.n, 0)
    // all three store results of it (b and c found it on their own), and about half is done
    // (on a failure, who worked it and what the gateways warned of say why)
    await until('three instances working', async () => (await owners()).filter((r) => r.o && r.n > 20).length === 3, 90_000).catch(async (e) => {
      console.log(JSON.stringify(await owners()), JSON.stringify(await sdk(a).batches.retrieve(batch.id)))
      for (const g of gws) console.log(g.output().split('\n').filter((l) => /warn|error|batch/i.test(l)).slice(0, 30).join('\n'))
      throw e
    })
    await until('half the batch', async () => (await done()) >= N / 2, 120_000)

    c.kill('SIGKILL')
    expect(await c.exited).not.toBe(0)
    const before = await done()
    expect(before).toBeLessThan(N)

    await until('the batch completes', async () => (await sdk(a).batches.retrieve(batch.id)).status === 'completed', 180_000)
    const ended = await sdk(b).batches.retrieve(batch.id)
    expect(ended.request_counts!.total).toBe(N)
    expect(ended.request_counts!.completed + ended.request_counts!.failed).toBe(N)
    // what the dead instance held when it died (its batch concurrency at most) fails, unsent again
    expect(ended.request_counts!.failed).toBeLessThanOrEqual(64)

    // one result per item: the output and error files hold every custom_id exactly once
    const linesOf = async (id: string | null | undefined) => (id ? (await (await sdk(b).files.content(id)).text()).trim().split('\n').map((l) => JSON.parse(l)) : [])
    const out = await linesOf(ended.output_file_id)
    const errors = await linesOf(ended.error_file_id)
    expect(out.length).toBe(ended.request_counts!.completed)
    const ids = [...out, ...errors].map((l) => l.custom_id as string)
    expect(new Set(ids).size).toBe(N)
    expect(ids.length).toBe(N)
    // (a line of another kind is shown whole: it says what failed the item)
    for (const e of errors) expect(e.error?.code ?? JSON.stringify(e).slice(0, 600)).toBe('batch_item_lost')

    // none went upstream twice; every succeeded one went once
    let twice = 0
    for (let i = 0; i < N; i++) if ((sent.get(`batch ${i}`) ?? 0) > 1) twice++
    // on a failure, what the gateways warned of says why
    if (twice > 0) for (const g of gws) console.log(g.output().split('\n').filter((l) => /warn|error/i.test(l)).slice(0, 30).join('\n'))
    expect(twice).toBe(0)
    for (const l of out) expect(sent.get(`batch ${l.custom_id.slice(5)}`)).toBe(1)

    // billed once: one record per stored result
    const [{ n }] = (await db.unsafe('SELECT count(*)::int AS n FROM generations WHERE batch_id = $1', [batch.id])) as { n: number }[]
    expect(n).toBe(ended.request_counts!.completed)
  }, 400_000)
})
