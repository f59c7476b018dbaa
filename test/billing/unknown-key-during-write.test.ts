// A key's row read on PostgreSQL across a write of charged costs is read again once the write
// ends (its spent could count the cost never or twice). A secret no key has comes back with no
// row at all, which no write of costs can make wrong: it is answered at once, not after up to
// four reads and their waits while a slow write stays open (each unknown secret a client sends
// would cost the database four reads, and its 401 a third of a second).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { onPostgres } from '../helpers/database.ts'
import { genInput } from '../generations/input.ts'
import { testServices, type TestServices } from '../generations/services.ts'

describe.skipIf(!onPostgres)('an unknown secret while a write of costs is open', () => {
  let t: TestServices
  beforeAll(async () => {
    t = await testServices()
  })
  afterAll(async () => {
    await t?.close()
  })

  test('is answered with one read, not held for the write', async () => {
    const key = (await t.s.keys.create({ name: 'k', credits: 10 })).record
    // another session holds the records' table: the recorder's next write stays open
    const other = new SQL({ url: t.s.config.database.url!, max: 1 })
    const held = other.reserve()
    const conn = await held
    await conn`BEGIN`
    await conn`LOCK TABLE generations IN ACCESS EXCLUSIVE MODE`
    try {
      t.s.recorder.record(genInput(t.s.catalog, key))
      const written = t.s.recorder.flush()
      await Bun.sleep(50)
      const started = performance.now()
      expect(await t.s.keys.authenticate('sk-sy-no-such-key-' + crypto.randomUUID())).toBeUndefined()
      expect(performance.now() - started).toBeLessThan(200)
      await conn`ROLLBACK`
      await written
    } finally {
      conn.release()
      await other.close()
    }
  })
})
