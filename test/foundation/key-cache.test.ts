// The key cache after a change made elsewhere (another instance, the CLI): the keys changed
// lately are read again, not every key ever made, so a gateway that makes a key for each CI job
// pays for what changed; a writer whose clock is behind is still seen; a full read still comes.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { KeyStore } from '../../src/auth/keys.ts'
import { testServices, type TestServices } from '../generations/services.ts'

let t: TestServices
beforeAll(async () => {
  t = await testServices({})
})
afterAll(async () => {
  await t.close()
})

test("a change elsewhere reads the keys it changed: the others' cached objects stay as they were", async () => {
  const elsewhere = t.s.keys
  const a = (await elsewhere.create({ name: 'a' })).record
  const b = (await elsewhere.create({ name: 'b' })).record
  // a was last changed ten minutes ago
  await t.s.storage.sql.run('UPDATE api_keys SET updated_at = ? WHERE id = ?', [Date.now() - 600_000, a.id])
  const mine = new KeyStore(t.s.storage)
  await mine.load()
  const cachedA = mine.current(a.id)!
  expect(cachedA.status).toBe('active')

  await elsewhere.update(b.id, { status: 'inactive' })
  await mine.invalidate()
  expect(mine.current(b.id)!.status).toBe('inactive')
  // a not read again: the same object (a full read makes every key anew)
  expect(mine.current(a.id)).toBe(cachedA)

  // a writer whose clock is half a minute behind: its change is read all the same
  const past = Date.now() - 30_000
  await t.s.storage.sql.run('UPDATE api_keys SET name = ?, updated_at = ? WHERE id = ?', ['a renamed', past, a.id])
  await mine.invalidate()
  expect(mine.current(a.id)!.name).toBe('a renamed')

  // a full read (now and then, or asked) reads every key
  const cachedB = mine.current(b.id)
  await mine.invalidate(true)
  expect(mine.current(b.id)).not.toBe(cachedB)
  expect(mine.current(b.id)!.status).toBe('inactive')
})
