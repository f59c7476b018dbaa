// An upgrade test's "database as the version before left it": the migrations from one on undone,
// and their records gone, so the next start runs them again. Drizzle runs every migration newer
// than the last one recorded, so an upgrade test of one migration also re-runs each later one:
// each needs its undo here (one without is an error, not a test that passes by chance).
import { expect } from 'bun:test'
import type { Migration } from '../../src/db/migrations.gen.ts'
import type { Sql } from '../../src/db/sql.ts'
import { openDatabaseOf } from './database.ts'
import { startGateway, type Gateway } from './server.ts'

const dropColumns = (table: string, columns: string[]) => columns.map((c) => `ALTER TABLE ${table} DROP COLUMN ${c}`)

// by tag less its number (the two dialects number them apart)
const UNDO: Record<string, string[]> = {
  batch_item_beyond: dropColumns('batch_items', ['beyond']),
  stored_items: ['DROP TABLE stored_items'],
  // (data only, into the table the undo above drops)
  stored_items_backfill: [],
  container_grants: ['DROP TABLE container_grants'],
  generation_served: dropColumns('generations', ['service_tier', 'speed', 'inference_geo']),
  usage_details: dropColumns('usage_hourly', ['cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens']),
  conversations: ['DROP TABLE conversation_items', 'DROP TABLE conversations'],
  generation_usage_extras: dropColumns('generations', ['usage_extras']),
  usage_hourly_extras: dropColumns('usage_hourly', ['cache_write_1h_tokens', 'input_audio_tokens', 'output_audio_tokens', 'web_search_requests', 'file_search_requests', 'image_tool_tokens']),
  prune_marks: ['DROP TABLE prune_marks'],
  // the index first: SQLite drops no column an index names
  key_grace: ['DROP INDEX api_keys_previous_hash', ...dropColumns('api_keys', ['previous_key_hash', 'previous_expires_at'])],
}

/** Undo `from` and every later migration of `migrations` on `sql`, newest first. */
export async function undoMigrationsFrom(sql: Sql, migrations: Migration[], from: Migration): Promise<void> {
  const later = migrations.filter((m) => m.when >= from.when).reverse()
  for (const m of later) {
    const undo = UNDO[m.tag.replace(/^\d+_/, '')]
    if (!undo) throw new Error(`no undo for migration ${m.tag} in test/helpers/undo-migrations.ts`)
    for (const s of undo) await sql.run(s)
  }
  await sql.run('DELETE FROM __drizzle_migrations WHERE created_at >= ?', [from.when])
}

/**
 * The data dir's database as the version before `from` left it (`from` and every later migration
 * undone, with their records), then a gateway started on it, which must have run them all again.
 */
export async function upgradedGateway(dataDir: string, env: Record<string, string>, migrations: Migration[], from: Migration): Promise<Gateway> {
  const db = await openDatabaseOf(dataDir)
  await undoMigrationsFrom(db.sql, migrations, from)
  await db.close()
  const gw = await startGateway({ dataDir, env, logLevel: 'silent' })
  await expectAllMigrated(gw, migrations)
  return gw
}

/** Every migration of `migrations` recorded as run on the gateway's database. */
export async function expectAllMigrated(gw: Gateway, migrations: Migration[]): Promise<void> {
  const row = await gw.services.storage.sql.get<{ n: number }>('SELECT count(*) AS n FROM __drizzle_migrations')
  expect(Number(row!.n)).toBe(migrations.length)
}
