// An upstream that reuses a generation id loses no record. Each
// record is keyed by the gateway's own `gen-…` id and keeps the id the client saw; the lookup
// takes either (a reused reply id finds this key's latest), and usage and spend count every
// record. Also: a database from before the change migrates with its records intact.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import OpenAI from 'openai'
import { hashKey } from '../../src/auth/key-rows.ts'
import { onPostgres } from '../helpers/database.ts'
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, ROOT, startGateway, tempDir, type Gateway } from '../helpers/server.ts'

const REUSED = 'chatcmpl-reused-by-upstream'
// gpt-4o list prices: $2.50 / M input, $10 / M output
const costOf = (prompt: number, completion: number) => (prompt * 2.5 + completion * 10) / 1e6

/** An upstream answer with the same id every time; the usage says which request it was. */
function reply(completion: number) {
  return {
    json: {
      id: REUSED,
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: `answer ${completion}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: completion, total_tokens: 10 + completion },
    },
  }
}

describe('an upstream reusing a generation id', () => {
  let up: FakeUpstream
  let g: Gateway
  let mine: { key: string; record: { id: string; account: string } }
  let theirs: { key: string; record: { id: string } }

  beforeAll(async () => {
    up = await startFakeUpstream()
    g = await startGateway({ env: { OPENAI_API_KEY: 'sk-upstream-openai-secret', OPENAI_BASE_URL: up.url } })
    mine = await g.services.keys.create({ name: 'd9-mine', account: 'd9' })
    theirs = await g.services.keys.create({ name: 'd9-theirs', account: 'd9-other' })
  })
  afterAll(async () => {
    await g.stop()
    await up.stop()
  })

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${g.url}/api/alpha/v1`, maxRetries: 0 })
  const lookup = (key: string, id: string) => fetch(`${g.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } })

  test('three replies with one id: three records, the reply id finds the latest, each gen- id its own', async () => {
    const completions = [5, 7, 9]
    for (const n of completions) {
      up.script(reply(n))
      const r = await client(mine.key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `request ${n}` }] })
      expect(r.id).toBe(REUSED) // the client sees the upstream's id, as before
    }
    const latest = await lookup(mine.key, REUSED)
    expect(latest.status).toBe(200)
    const gen = ((await latest.json()) as { generation: any }).generation
    expect(gen.id).toBe(REUSED)
    expect(gen.usage.completion_tokens).toBe(9)
    expect(gen.gateway_id).toMatch(/^gen-[0-9a-f]{32}$/)

    // in the order stored: the gateway's ids are time-ordered
    const rows = await g.services.storage.sql.all<{ id: string; replyId: string; c: number }>(
      'SELECT id, reply_id AS "replyId", completion_tokens AS c FROM generations WHERE api_key_id = ? ORDER BY id',
      [mine.record.id],
    )
    expect(rows.map((r) => [r.replyId, r.c])).toEqual(completions.map((n) => [REUSED, n]))
    expect(new Set(rows.map((r) => r.id)).size).toBe(3)
    expect(rows[2]!.id).toBe(gen.gateway_id)
    for (const r of rows) {
      const one = ((await (await lookup(mine.key, r.id)).json()) as { generation: any }).generation
      expect([one.gateway_id, one.id, one.usage.completion_tokens]).toEqual([r.id, REUSED, r.c])
    }

    // usage and spend count every record, not only the first
    const expected = completions.reduce((sum, n) => sum + costOf(10, n), 0)
    const usage = (await (await fetch(`${g.url}/api/v1/usage?timeframe=24h`, { headers: { authorization: `Bearer ${mine.key}` } })).json()) as any
    expect(usage.totals.total_requests).toBe(3)
    expect(usage.totals.output_tokens).toBe(21)
    expect(usage.totals.total_cost).toBeCloseTo(expected, 9)
    expect((await g.services.keys.get(mine.record.id))!.spent).toBeCloseTo(expected, 12)
  })

  test("another key's record with the same reply id stays apart in both directions", async () => {
    up.script(reply(11))
    await client(theirs.key).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'theirs' }] })
    const t = ((await (await lookup(theirs.key, REUSED)).json()) as { generation: any }).generation
    expect([t.apiKeyId, t.usage.completion_tokens]).toEqual([theirs.record.id, 11])
    // my latest is still mine, though theirs is newer
    const m = ((await (await lookup(mine.key, REUSED)).json()) as { generation: any }).generation
    expect([m.apiKeyId, m.usage.completion_tokens]).toEqual([mine.record.id, 9])
    // their gateway id is a 404 for me, exactly like an unknown id
    const r = await lookup(mine.key, t.gateway_id)
    expect(r.status).toBe(404)
    expect(((await r.json()) as { error: string }).error).toBe(`generation not found: ${t.gateway_id}`)
  })
})

// an SQLite file made by hand the way an old gateway left it: PostgreSQL support came later
describe.skipIf(onPostgres)('migration: a database from before gateway ids', () => {
  test('old records survive, keep their id as the reply id, and are found and counted', async () => {
    const dir = tempDir('switchyard-d9-')
    const secret = 'sk-sy-d9-old-' + crypto.randomUUID().replaceAll('-', '')
    const createdAt = Date.now() - 60_000
    // the schema as the first migration left it, recorded as applied the way drizzle does
    const db = new Database(join(dir, 'switchyard.db'), { create: true })
    const init = readFileSync(join(ROOT, 'db/migrations/0000_init.sql'), 'utf8')
    for (const stmt of init.split('--> statement-breakpoint')) db.run(stmt)
    const journal = JSON.parse(readFileSync(join(ROOT, 'db/migrations/meta/_journal.json'), 'utf8'))
    db.run('CREATE TABLE __drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
    db.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', ['old', journal.entries[0].when])
    db.run(
      `INSERT INTO api_keys (id, account, name, key_hash, key_prefix, status, credits, spent, created_at, updated_at)
       VALUES ('key_old', 'old', 'old', ?, 'sk-sy-d9-o', 'active', NULL, 0.000075, 1, 1)`,
      [hashKey(secret)],
    )
    db.run(
      `INSERT INTO generations (id, api_key_id, account, endpoint, stream, model, provider, created_at, prompt_tokens,
       completion_tokens, total_tokens, cost, unpriced, finish_reason) VALUES ('chatcmpl-old', 'key_old', 'old',
       'openai.chat.completions', 0, 'gpt-4o', 'openai', ?, 10, 5, 15, 0.000075, 0, 'stop')`,
      [createdAt],
    )
    db.run(`INSERT INTO usage_hourly (account, model, hour, requests, input_tokens, output_tokens, total_tokens, cost, unpriced_requests)
       VALUES ('old', 'gpt-4o', ?, 1, 10, 5, 15, 0.000075, 0)`, [Math.floor(createdAt / 3_600_000) * 3_600_000])
    db.close()

    const g = await startGateway({ dataDir: dir })
    try {
      const row = g.services.storage.sqlite!.query("SELECT id, reply_id AS replyId FROM generations WHERE id = 'chatcmpl-old'").get()
      expect(row).toEqual({ id: 'chatcmpl-old', replyId: 'chatcmpl-old' })
      const r = await fetch(`${g.url}/api/v1/generations?id=chatcmpl-old`, { headers: { authorization: `Bearer ${secret}` } })
      expect(r.status).toBe(200)
      const gen = ((await r.json()) as { generation: any }).generation
      expect([gen.id, gen.gateway_id, gen.usage.total_tokens, gen.cost]).toEqual(['chatcmpl-old', 'chatcmpl-old', 15, 0.000075])
      const usage = (await (await fetch(`${g.url}/api/v1/usage?timeframe=24h`, { headers: { authorization: `Bearer ${secret}` } })).json()) as any
      expect([usage.totals.total_requests, usage.totals.total_tokens]).toEqual([1, 15])
      expect(g.services.storage.sqlite!.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
    } finally {
      await g.stop()
      cleanup(dir)
    }
  })
})
