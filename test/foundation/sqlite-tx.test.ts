// SQLite ends a transaction itself on some failures (here a full database: the whole
// transaction is rolled back, not only the statement). Statements a transaction's body sent
// without waiting for the failed one, as the record write sends its statements so PostgreSQL
// can pipeline them, must then be refused: run, they would commit on their own, outside it.
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { SqliteSql } from '../../src/db/sqlite-sql.ts'

test('after SQLite rolled a transaction back itself, the statements sent after the failed one are refused, not committed on their own', async () => {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE t (x BLOB); CREATE TABLE u (n INTEGER); INSERT INTO u VALUES (0)')
  const pages = (db.query('PRAGMA page_count').get() as { page_count: number }).page_count
  db.exec(`PRAGMA max_page_count = ${pages + 2}`)
  const sql = new SqliteSql(db)
  let after: unknown
  const tx = sql.tx(async (q) => {
    await q.run('UPDATE u SET n = n + 1')
    const full = q.run('INSERT INTO t VALUES (randomblob(100000))')
    const next = q.run('UPDATE u SET n = n + 10').catch((e) => (after = e))
    await Promise.all([full, next])
  })
  await expect(tx).rejects.toThrow(/full/)
  expect(db.inTransaction).toBe(false)
  expect(String(after)).toContain('rolled back by an earlier failure')
  expect((db.query('SELECT n FROM u').get() as { n: number }).n).toBe(0)
  // the seam still works afterwards, and a transaction that fails no statement commits whole
  await sql.tx(async (q) => {
    await Promise.all([q.run('UPDATE u SET n = n + 1'), q.run('UPDATE u SET n = n + 10')])
  })
  expect((db.query('SELECT n FROM u').get() as { n: number }).n).toBe(11)
})

test('the refusals after such a failure carry it: whichever statement the body sees first, a full disk reads as one', async () => {
  const { isStoreFull } = await import('../../src/db/unavailable.ts')
  const db = new Database(':memory:')
  db.exec('CREATE TABLE t (x BLOB); CREATE TABLE u (n INTEGER); INSERT INTO u VALUES (0)')
  const pages = (db.query('PRAGMA page_count').get() as { page_count: number }).page_count
  db.exec(`PRAGMA max_page_count = ${pages + 2}`)
  const sql = new SqliteSql(db)
  // the failing statement's refusal reaches Promise.all a step later than the next one's, as
  // when the record write's spend statement (awaited inside a function of its own) fills the disk
  const seen = await sql
    .tx(async (q) => {
      const full = q.run('INSERT INTO t VALUES (randomblob(100000))').then(() => {})
      await Promise.all([full, q.run('UPDATE u SET n = n + 1')])
    })
    .catch((e) => e)
  expect(String(seen)).toContain('rolled back by an earlier failure')
  expect(isStoreFull(seen)).toBe(true)
  // a body that swallows the failure does not commit half of itself, and says why
  const swallowed = await sql
    .tx(async (q) => {
      await q.run('UPDATE u SET n = n + 1')
      await q.run('INSERT INTO t VALUES (randomblob(100000))').catch(() => {})
    })
    .catch((e) => e)
  expect(String(swallowed)).toContain('rolled back by an earlier failure')
  expect(isStoreFull(swallowed)).toBe(true)
  expect((db.query('SELECT n FROM u').get() as { n: number }).n).toBe(0)
})
