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

test('a key deleted by hand stops authenticating at the next poll, which reads every key when there are fewer', async () => {
  const { key, record } = await t.s.keys.create({ name: 'gone' })
  const mine = new KeyStore(t.s.storage)
  await mine.watch(20)
  try {
    expect(await mine.authenticate(key)).toBeDefined()
    await t.s.storage.sql.run('DELETE FROM api_keys WHERE id = ?', [record.id])
    let found = await mine.authenticate(key)
    for (let i = 0; i < 100 && found; i++) {
      await Bun.sleep(20)
      found = await mine.authenticate(key)
    }
    expect(found).toBeUndefined()
  } finally {
    await mine.stop()
  }
})

// A reload's read may begin before a change made here and answer after it (a database busy,
// or PostgreSQL answering on another connection): the row it read is older than the key in
// memory. Put back, it undid an operator's credit cut until the next read, and a fallback was
// held and served on the credit just cut.
for (const full of [false, true]) {
  test(`a change made here is not undone by a ${full ? 'full ' : ''}reload whose read began before it`, async () => {
    const mine = new KeyStore(t.s.storage)
    await mine.load()
    const { record } = await mine.create({ name: `cut ${full}`, credits: 5 })
    const store = mine as unknown as { read: Function; loadChanged: () => Promise<void> }
    const read = store.read
    let answer!: () => void
    const late = new Promise<void>((r) => (answer = r))
    let began!: () => void
    const reading = new Promise<void>((r) => (began = r))
    // the rows read now, handed on once the change below is made
    store.read = async function (this: unknown, query: unknown, use: (rows: unknown[]) => unknown) {
      const rows = (await read.call(this, query, (rows: unknown[]) => rows)) as unknown[]
      began()
      await late
      return use(rows)
    }
    const reloaded = mine.invalidate(full)
    await reading
    store.read = read
    // the change's own reload, after this one, is not what is tested: the row put back is
    store.loadChanged = async () => {}
    await mine.update(record.id, { credits: 0 })
    expect(mine.current(record.id)!.credits).toBe(0)
    answer()
    await reloaded
    expect(mine.current(record.id)!.credits).toBe(0)
  })
}

test("a writer whose clock is ahead does not hide the others' changes", async () => {
  const a = (await t.s.keys.create({ name: 'ahead' })).record
  const b = (await t.s.keys.create({ name: 'behind it' })).record
  const mine = new KeyStore(t.s.storage)
  await mine.load()
  // a writer two minutes ahead renames a
  await t.s.storage.sql.run('UPDATE api_keys SET name = ?, updated_at = ? WHERE id = ?', ['ahead renamed', Date.now() + 120_000, a.id])
  await mine.invalidate()
  expect(mine.current(a.id)!.name).toBe('ahead renamed')
  // one on time disables b
  await t.s.keys.update(b.id, { status: 'inactive' })
  await mine.invalidate()
  expect(mine.current(b.id)!.status).toBe('inactive')
})

test("a rotation's grace period: the old secret works beside the new one, on the instance that rotated and on one that only reads the rows, until it ends", async () => {
  const { key: first, record } = await t.s.keys.create({ name: 'graced' })
  const here = t.s.keys
  // an instance that has never read this key: each secret is looked up
  const elsewhere = new KeyStore(t.s.storage)
  // one that held the key before the rotation and reads the change
  const reading = new KeyStore(t.s.storage)
  await reading.load()
  expect(await reading.authenticate(first)).toBeDefined()

  const second = (await here.rotate(record.id, 60_000))!
  expect(second.record.previousExpiresAt).toBeGreaterThan(Date.now() + 59_000)
  await reading.invalidate()
  for (const store of [here, elsewhere, reading]) {
    expect((await store.authenticate(first))?.id).toBe(record.id)
    expect((await store.authenticate(second.key))?.id).toBe(record.id)
    expect(store.known(first)?.id).toBe(record.id)
  }

  // a second rotation within the grace: the secret it replaces is the previous one now, the first goes
  const third = (await here.rotate(record.id, 60_000))!
  await reading.invalidate()
  const fresh = new KeyStore(t.s.storage)
  for (const store of [here, reading, fresh]) {
    expect(await store.authenticate(first)).toBeUndefined()
    expect((await store.authenticate(second.key))?.id).toBe(record.id)
    expect((await store.authenticate(third.key))?.id).toBe(record.id)
  }

  // a short grace ends: refused from memory where it was held, and when looked up where it was not
  const fourth = (await here.rotate(record.id, 150))!
  await reading.invalidate()
  expect((await here.authenticate(third.key))?.id).toBe(record.id)
  expect((await reading.authenticate(third.key))?.id).toBe(record.id)
  await Bun.sleep(200)
  const late = new KeyStore(t.s.storage)
  for (const store of [here, reading, late]) {
    expect(await store.authenticate(third.key)).toBeUndefined()
    expect(store.known(third.key)).toBeNull()
    expect((await store.authenticate(fourth.key))?.id).toBe(record.id)
  }
  expect(here.current(record.id)!.previousExpiresAt).toBeLessThan(Date.now())

  // a grace ended early: refused wherever it was held, once the change is read
  const ended = (await here.rotate(record.id, 60_000))!
  await reading.invalidate()
  expect((await reading.authenticate(fourth.key))?.id).toBe(record.id)
  expect((await here.revokePrevious(record.id))!.previousExpiresAt).toBeNull()
  await reading.invalidate()
  for (const store of [here, reading, new KeyStore(t.s.storage)]) {
    expect(await store.authenticate(fourth.key)).toBeUndefined()
    expect((await store.authenticate(ended.key))?.id).toBe(record.id)
  }

  // a rotation without a grace period ends the previous secret at once, wherever it is held
  const fifth = (await here.rotate(record.id, 60_000))!
  await reading.invalidate()
  expect((await reading.authenticate(ended.key))?.id).toBe(record.id)
  const sixth = (await here.rotate(record.id))!
  await reading.invalidate()
  for (const store of [here, reading, new KeyStore(t.s.storage)]) {
    expect(await store.authenticate(ended.key)).toBeUndefined()
    expect(await store.authenticate(fifth.key)).toBeUndefined()
    expect((await store.authenticate(sixth.key))?.id).toBe(record.id)
  }
  expect(sixth.record.previousExpiresAt).toBeNull()
})
