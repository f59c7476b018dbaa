// A database of the version before items kept what may be billed beyond their prompt
// (batch_items.beyond), with a batch still pending: the gateway migrates it at start, and the
// items stored without the column run as they did (held for their prompt and cap alone).
import { afterAll, expect, test } from 'bun:test'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropDatabaseFor, onPostgres, openDatabaseOf } from '../helpers/database.ts'
import { undoMigrationsFrom } from '../helpers/undo-migrations.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'
import { chat, NO_LIMITS } from './helpers.ts'

const dataDir = tempDir('switchyard-batch-upgrade-')
afterAll(async () => {
  cleanup(dataDir)
  await dropDatabaseFor(dataDir)
})

const migrations = onPostgres ? PG_MIGRATIONS : MIGRATIONS
const added = migrations.find((m) => m.tag.endsWith('_batch_item_beyond'))!

test('pending items stored before batch_items.beyond: the database is migrated at start, and they run', async () => {
  const first = await startGateway({ dataDir, env: NO_LIMITS, logLevel: 'silent' })
  const { key, record } = await first.services.keys.create({ name: 'from before', credits: 10 })
  await first.stop()

  // the database as the version before left it: no column, no record of its migration (nor of any
  // later one), and a batch whose items were stored with the columns there were
  const db = await openDatabaseOf(dataDir)
  // (what the later migrations made goes too: they run again at start)
  await undoMigrationsFrom(db.sql, migrations, added)
  const now = Date.now()
  await db.sql.run(
    `INSERT INTO batches (id, api_key_id, family, endpoint, completion_window, status, total, created_at, expires_at) VALUES (?, ?, 'openai', '/v1/chat/completions', '24h', 'queued', 3, ?, ?)`,
    ['batch_from_before', record.id, now, now + 86_400_000],
  )
  for (let idx = 0; idx < 3; idx++) {
    const body = chat('mock-gpt', `item ${idx}`, { max_tokens: 16 })
    await db.sql.run(
      'INSERT INTO batch_items (batch_id, idx, custom_id, body, model, prompt_estimate, max_output_tokens, choices, service_tier) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)',
      ['batch_from_before', idx, `old-${idx}`, JSON.stringify(body), body.model, 20, 16],
    )
  }
  await db.close()

  const second = await startGateway({ dataDir, env: NO_LIMITS, logLevel: 'silent' })
  try {
    const store = second.services.batches!.store
    for (let i = 0; i < 2_000 && !(await store.byId('batch_from_before'))?.endedAt; i++) await Bun.sleep(10)
    expect(await store.byId('batch_from_before')).toMatchObject({ status: 'completed', succeeded: 3, failed: 0 })
    const row = await second.services.storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM __drizzle_migrations')
    expect(Number(row!.n)).toBe(migrations.length)
    const r = await fetch(`${second.url}/api/v1/batches/batch_from_before`, { headers: { authorization: `Bearer ${key}` } })
    expect(((await r.json()) as { request_counts: unknown }).request_counts).toMatchObject({ completed: 3, failed: 0 })
  } finally {
    await second.stop()
  }
}, 60_000)
