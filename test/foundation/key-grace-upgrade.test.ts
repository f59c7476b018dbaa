// A database from before rotations could keep the old secret (api_keys.previous_key_hash,
// previous_expires_at), holding keys: the gateway migrates it at start, a key made before serves
// as it did, and its next rotation may keep the old secret working for a while.
import { afterAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { MIGRATIONS, PG_MIGRATIONS } from '../../src/db/migrations.gen.ts'
import { dropDatabaseFor, onPostgres } from '../helpers/database.ts'
import { cleanup, startGateway, tempDir } from '../helpers/server.ts'
import { upgradedGateway } from '../helpers/undo-migrations.ts'

const dataDir = tempDir('switchyard-key-grace-upgrade-')
const ADMIN = 'adm-grace-' + crypto.randomUUID()
afterAll(async () => {
  cleanup(dataDir)
  await dropDatabaseFor(dataDir)
})

const migrations = onPostgres ? PG_MIGRATIONS : MIGRATIONS
const added = migrations.find((m) => m.tag.endsWith('_key_grace'))!

test('a key made before the columns serves after the upgrade, and its rotation keeps the old secret for the grace asked', async () => {
  expect(added).toBeDefined()
  const env = { SWITCHYARD_ADMIN_TOKEN: ADMIN }
  const first = await startGateway({ dataDir, env, logLevel: 'silent' })
  const { key, record } = await first.services.keys.create({ name: 'from before' })
  await first.stop()

  // the database as the version before left it: no columns, no record of their migration
  const second = await upgradedGateway(dataDir, env, migrations, added)
  try {
    const models = (k: string) => new OpenAI({ apiKey: k, baseURL: `${second.url}/api/alpha/v1`, maxRetries: 0 }).models.list().then(() => 200, (e) => e.status)
    expect(await models(key)).toBe(200)
    const shown = (await (await fetch(`${second.url}/admin/v1/keys/${record.id}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { previous_key_expires_at: unknown }
    expect(shown.previous_key_expires_at).toBeNull()
    const r = await fetch(`${second.url}/admin/v1/keys/${record.id}/rotate`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"grace_period_seconds":600}' })
    expect(r.status).toBe(200)
    const rotated = (await r.json()) as { key: string; previous_key_expires_at: number }
    expect(rotated.previous_key_expires_at).toBeGreaterThan(Date.now() / 1000 + 590)
    expect(await models(key)).toBe(200)
    expect(await models(rotated.key)).toBe(200)
  } finally {
    await second.stop()
  }
}, 60_000)
