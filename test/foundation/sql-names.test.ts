// Plain SQL names its tables and columns from the one declaration (src/db/columns.ts), so a
// renamed or removed column is a compile error in every statement. A statement that spells a
// declared table in its text would escape that check: none may (the generated migrations aside).
import { expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { getTableName, is, Table } from 'drizzle-orm'
import { names } from '../../src/db/columns.ts'
import * as schema from '../../src/db/schema.ts'
import { ROOT } from '../helpers/server.ts'

const TABLES = Object.values(schema)
  .filter((t) => is(t, Table))
  .map((t) => getTableName(t as Table))

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    if (statSync(p).isDirectory()) return /^migrations/.test(f) ? [] : sources(p)
    return /\.ts$/.test(f) && !/^migrations.*\.gen\.ts$/.test(f) ? [p] : []
  })
}

test('names() gives each column its SQL name under its TypeScript key, and the table as $table', () => {
  const g = names(schema.generations)
  expect(g.$table).toBe('generations')
  expect(g.apiKeyId).toBe('api_key_id')
  expect(g.createdAt).toBe('created_at')
  expect(Object.isFrozen(g)).toBe(true)
})

test('no statement in src or scripts names a declared table in its text', () => {
  const spelled = new RegExp(`\\b(FROM|INTO|UPDATE|JOIN|TABLE)\\s+"?(${TABLES.join('|')})\\b`)
  const found = [join(ROOT, 'src'), join(ROOT, 'scripts')]
    .flatMap(sources)
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => [`${relative(ROOT, f)}:${i + 1}`, line] as const))
    .filter(([, line]) => spelled.test(line))
    .map(([at, line]) => `${at}: ${line.trim()}`)
  expect(found).toEqual([])
})
