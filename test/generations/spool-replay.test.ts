// The records' spool on the recorder as the server builds it, on either store: a spool a dead
// gateway left is written once (records already stored count nothing twice), a live gateway's
// is left alone, and a local disk that cannot keep the records waiting refuses generations.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tryLockFile } from '../../src/db/data-dir-lock.ts'
import { newGenerationId, toRow, type GenerationRow } from '../../src/generations/row.ts'
import { failGenerationWrites, onPostgres } from '../helpers/database.ts'
import { genInput } from './input.ts'
import { rollup, testServices, type TestServices } from './services.ts'

let t: TestServices
afterEach(async () => {
  await t?.close()
})

const spoolDir = (t: TestServices) => join(t.s.config.dataDir, 'spool')

async function figures(t: TestServices, keyId: string) {
  const recs = await t.s.storage.sql.all<{ cost: number }>('SELECT cost FROM generations WHERE api_key_id = ?', [keyId])
  const key = await t.s.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [keyId])
  const hours = await rollup(t.s)
  return {
    records: recs.length,
    cost: recs.reduce((s, r) => s + Number(r.cost), 0),
    spent: Number(key!.spent),
    rolledUp: hours.reduce((n, h) => n + Number(h.requests), 0),
    rolledCost: hours.reduce((n, h) => n + Number(h.cost), 0),
  }
}

/** A spool as a killed gateway leaves it: a record a line, the last one cut short by the kill. */
function leaveSpool(t: TestServices, id: string, rows: GenerationRow[]) {
  mkdirSync(spoolDir(t), { recursive: true })
  writeFileSync(join(spoolDir(t), `${id}.jsonl`), rows.map((r) => JSON.stringify(r) + '\n').join('') + '{"id":"gen-torn","mod')
}

describe('records spool', () => {
  test('a dead gateway’s spool is written once: a record stored already adds nothing to the spend or the rollup', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    // one record reached the database before the kill, one did not; both are in the spool
    const storedId = t.s.recorder.record(genInput(t.s.catalog, key))!
    await t.s.recorder.flush()
    const before = await figures(t, key.id)
    expect(before.records).toBe(1)
    const stored = (await t.s.recorder.get(storedId))!
    const lost = toRow(genInput(t.s.catalog, key), 0.0125, newGenerationId())
    leaveSpool(t, 'dead-gateway', [stored, lost])

    await t.s.recorder.replaySpools()
    const after = await figures(t, key.id)
    expect(after.records).toBe(2)
    expect(after.cost).toBeCloseTo(before.cost + 0.0125, 12)
    expect(after.spent).toBeCloseTo(after.cost, 12)
    expect(after.rolledUp).toBe(2)
    expect(after.rolledCost).toBeCloseTo(after.cost, 12)
    // the key's spend as admission sees it follows the stored one
    expect(t.s.keys.current(key.id)!.spent).toBeCloseTo(after.spent, 12)
    expect(readdirSync(spoolDir(t)).filter((f) => f.startsWith('dead-gateway'))).toEqual([])

    // written again (a spool left by a kill after its commit): nothing moves
    leaveSpool(t, 'dead-again', [stored, lost])
    await t.s.recorder.replaySpools()
    expect(await figures(t, key.id)).toEqual(after)
  })

  // a deadlock or a serialization failure says the transaction lost a race, not that the record is
  // bad: the spool stays and is tried again, as for a database that is away
  test.skipIf(!onPostgres)('a replay that loses a race with another write (deadlock) keeps the spool and writes it later', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    const rows = [toRow(genInput(t.s.catalog, key), 0.01, newGenerationId()), toRow(genInput(t.s.catalog, key), 0.02, newGenerationId())]
    leaveSpool(t, 'dead-gateway', rows)
    const sql = t.s.storage.sql
    await sql.run(`CREATE FUNCTION test_lose_race() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'deadlock detected (simulated)' USING ERRCODE = '40P01'; END $$ LANGUAGE plpgsql`)
    await sql.run('CREATE TRIGGER test_lose_race BEFORE INSERT ON generations FOR EACH ROW EXECUTE FUNCTION test_lose_race()')
    await t.s.recorder.replaySpools()
    expect(existsSync(join(spoolDir(t), 'dead-gateway.jsonl'))).toBe(true)
    expect((await figures(t, key.id)).records).toBe(0)
    await sql.run('DROP TRIGGER test_lose_race ON generations')
    await sql.run('DROP FUNCTION test_lose_race()')
    await t.s.recorder.replaySpools()
    const after = await figures(t, key.id)
    expect(after.records).toBe(2)
    expect(after.cost).toBeCloseTo(0.03, 12)
    expect(after.spent).toBeCloseTo(0.03, 12)
    expect(existsSync(join(spoolDir(t), 'dead-gateway.jsonl'))).toBe(false)
  })

  // on a data dir several gateways share, one killed while its database was away leaves a spool
  // that no start may come for soon: the gateways still running write it
  test('a spool left by a gateway that died while this one runs is written without waiting for a start', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    leaveSpool(t, 'died-meanwhile', [toRow(genInput(t.s.catalog, key), 0.01, newGenerationId())])
    let after = await figures(t, key.id)
    for (const until = Date.now() + 8_000; after.records === 0 && Date.now() < until; after = await figures(t, key.id)) await Bun.sleep(100)
    expect(after.records).toBe(1)
    expect(after.spent).toBeCloseTo(0.01, 12)
    expect(existsSync(join(spoolDir(t), 'died-meanwhile.jsonl'))).toBe(false)
  }, 20_000)

  // a running gateway's spool is its own for as long as it runs: between one outage's spool and
  // the next, another gateway looking for dead ones (which listed the file before it went) must
  // not get its lock, or this one's next spool is refused (507) or written by the other from under it
  test('a running gateway keeps its spool\'s lock between outages', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    let undo = await failGenerationWrites(t.s.storage.sql, 'full')
    t.s.recorder.record(genInput(t.s.catalog, key))
    await t.s.recorder.flush()
    const [file] = readdirSync(spoolDir(t)).filter((f) => f.endsWith('.jsonl'))
    const lockName = file!.replace(/\.jsonl$/, '.lock')
    await undo()
    await t.s.recorder.flush()
    expect(readdirSync(spoolDir(t)).filter((f) => f.endsWith('.jsonl'))).toEqual([])
    // the other gateway's look reaches the lock now, just after the first outage's spool went
    const other = tryLockFile(spoolDir(t), lockName)
    try {
      expect(other).toBeNull()
      undo = await failGenerationWrites(t.s.storage.sql, 'full')
      t.s.recorder.record(genInput(t.s.catalog, key))
      await t.s.recorder.flush()
      expect(t.s.recorder.backlogged).toBe(false)
      expect(readdirSync(spoolDir(t))).toContain(file)
      await undo()
      await t.s.recorder.flush()
      expect((await figures(t, key.id)).records).toBe(2)
    } finally {
      other?.release()
    }
  })

  // that lock outlives the spool, so one killed with none left stays behind: removed once free
  // (and not just made: its process may be about to take it for its first spool)
  test('the lock of a gateway killed with no spool left is removed; a fresh one is not', async () => {
    t = await testServices()
    mkdirSync(spoolDir(t), { recursive: true })
    const old = join(spoolDir(t), 'killed-long-ago.lock')
    const fresh = join(spoolDir(t), 'just-made.lock')
    writeFileSync(old, '')
    writeFileSync(fresh, '')
    const hourAgo = (Date.now() - 3_600_000) / 1000
    utimesSync(old, hourAgo, hourAgo)
    await t.s.recorder.replaySpools()
    expect(existsSync(old)).toBe(false)
    expect(existsSync(fresh)).toBe(true)
  })

  test('a spool whose gateway is still running (its lock held) is left to it', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    leaveSpool(t, 'live-gateway', [toRow(genInput(t.s.catalog, key), 0.01, newGenerationId())])
    const lock = tryLockFile(spoolDir(t), 'live-gateway.lock')!
    try {
      await t.s.recorder.replaySpools()
      expect((await figures(t, key.id)).records).toBe(0)
      expect(existsSync(join(spoolDir(t), 'live-gateway.jsonl'))).toBe(true)
    } finally {
      lock.release()
    }
    await t.s.recorder.replaySpools()
    expect((await figures(t, key.id)).records).toBe(1)
  })

  test('records waiting for the database go to the spool, which goes once they are stored', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    const undo = await failGenerationWrites(t.s.storage.sql, 'full')
    t.s.recorder.record(genInput(t.s.catalog, key))
    await t.s.recorder.flush()
    t.s.recorder.record(genInput(t.s.catalog, key))
    await Bun.sleep(100)
    const spooled = readdirSync(spoolDir(t)).filter((f) => f.endsWith('.jsonl'))
    expect(spooled).toHaveLength(1)
    expect((await Bun.file(join(spoolDir(t), spooled[0]!)).text()).trim().split('\n')).toHaveLength(2)
    await undo()
    await t.s.recorder.flush()
    expect((await figures(t, key.id)).records).toBe(2)
    // the spool goes; its lock stays this gateway's until it stops
    expect(readdirSync(spoolDir(t)).filter((f) => f.endsWith('.jsonl'))).toEqual([])
  })

  test('a local disk that cannot keep the records waiting: new generations refused (507), never a crash', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    // where the spool goes, a file: every append fails, as on a full disk
    rmSync(spoolDir(t), { recursive: true, force: true })
    writeFileSync(spoolDir(t), '')
    const undo = await failGenerationWrites(t.s.storage.sql, 'full')
    t.s.recorder.record(genInput(t.s.catalog, key))
    await t.s.recorder.flush()
    expect(t.s.recorder.backlogged).toBe(true)
    expect(t.s.recorder.backlogNote).toContain('local disk')
    expect(t.logs.join('\n')).toContain('could not be kept on the local disk')
    // the database back: the record is written from memory, and generations are taken again
    await undo()
    await t.s.recorder.flush()
    expect(t.s.recorder.backlogged).toBe(false)
    expect((await figures(t, key.id)).records).toBe(1)
    rmSync(spoolDir(t))
  })
})

// what a spool keeps, as the gateway that wrote it knew its records: one from before a column
// was added lacks it, and the start after the upgrade still writes it
describe('records spool, its edge cases', () => {
  test('a spool written before a column was added: its records are written with the default a fresh record has', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    const row = toRow(genInput(t.s.catalog, key), 0.0125, newGenerationId())
    // as an older version wrote it: none of the columns added since
    const old: Partial<GenerationRow> = { ...row }
    for (const c of ['usageExtras', 'serviceTier', 'speed', 'inferenceGeo', 'replayed', 'cached', 'usageCounted', 'deployment', 'attempts'] as const) delete old[c]
    leaveSpool(t, 'older-version', [old as GenerationRow])
    await t.s.recorder.replaySpools()
    const after = await figures(t, key.id)
    expect(after.records).toBe(1)
    expect(after.spent).toBeCloseTo(0.0125, 12)
    expect(after.rolledCost).toBeCloseTo(0.0125, 12)
    const stored = (await t.s.recorder.get(row.id))!
    expect(stored.replayed).toBeFalsy()
    expect(stored.usageExtras).toBeNull()
    expect(readdirSync(spoolDir(t)).filter((f) => f.startsWith('older-version'))).toEqual([])
  })

  test('a spooled record the database refuses is kept beside the spool with the reason, never dropped', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    const good = toRow(genInput(t.s.catalog, key), 0.01, newGenerationId())
    // no key, no model: nothing a record can be stored without
    const bad = { ...toRow(genInput(t.s.catalog, key), 0.02, newGenerationId()), apiKeyId: null, model: undefined } as unknown as GenerationRow
    // and one the database itself refuses
    const refused = toRow(genInput(t.s.catalog, key), 0.03, newGenerationId())
    const undo = await failGenerationWrites(t.s.storage.sql, 'error', refused.replyId)
    leaveSpool(t, 'with-bad', [good, bad, refused])
    await t.s.recorder.replaySpools()
    await undo()
    const after = await figures(t, key.id)
    expect(after.records).toBe(1)
    expect(after.spent).toBeCloseTo(0.01, 12)
    const left = readdirSync(spoolDir(t)).filter((f) => f.startsWith('with-bad'))
    expect(left).toEqual(['with-bad.rejected'])
    const kept = readFileSync(join(spoolDir(t), 'with-bad.rejected'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(kept.map((k) => k.record.id)).toEqual([bad.id, refused.id])
    expect(kept[0].reason).toContain('apiKeyId')
    expect(kept[1].reason).toContain('simulated write failure')
    const said = t.logs.filter((l) => l.includes('with-bad') && l.includes('rejected'))
    expect(said).toHaveLength(1)
    // looked at again: the kept record is not a spool, and nothing is said twice
    await t.s.recorder.replaySpools()
    expect(t.logs.filter((l) => l.includes('with-bad') && l.includes('rejected'))).toHaveLength(1)
  })

  // the id check cannot see a record that retention pruned: a spool written again after that
  // (a kill between the commit and the file's removal, and no gateway on its data dir since)
  // must not count it again
  test('a spooled record stored and then pruned is not counted again; one never stored still is', async () => {
    t = await testServices()
    const key = (await t.s.keys.create({ name: 'k' })).record
    const longAgo = Date.now() - 200 * 86_400_000
    const storedId = t.s.recorder.record(genInput(t.s.catalog, key, { createdAt: longAgo }))!
    await t.s.recorder.flush()
    const stored = (await t.s.recorder.get(storedId))!
    expect(await t.s.recorder.prune()).toBe(1)
    const before = await figures(t, key.id)
    expect(before.records).toBe(0)
    expect(before.spent).toBeGreaterThan(0)
    const fresh = toRow(genInput(t.s.catalog, key), 0.01, newGenerationId())
    leaveSpool(t, 'after-prune', [stored, fresh])
    await t.s.recorder.replaySpools()
    const after = await figures(t, key.id)
    expect(after.records).toBe(1)
    expect(after.spent).toBeCloseTo(before.spent + 0.01, 12)
    expect(after.rolledCost).toBeCloseTo(before.rolledCost + 0.01, 12)
    // kept beside, not counted, and said why
    const kept = readFileSync(join(spoolDir(t), 'after-prune.rejected'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(kept.map((k) => k.record.id)).toEqual([stored.id])
    expect(kept[0].reason).toContain('prun')
  })

  // the bound is this gateway's memory of records waiting: a dead peer's spool is on the disk
  // already, and written by whichever gateway gets to it
  test('a dead peer’s spool waiting for the database does not count toward this gateway’s backlog bound', async () => {
    t = await testServices({ SWITCHYARD_RECORDS_MAX_BACKLOG: '3' })
    const key = (await t.s.keys.create({ name: 'k' })).record
    const undo = await failGenerationWrites(t.s.storage.sql, 'full')
    leaveSpool(t, 'dead-peer', [0, 1, 2, 3].map(() => toRow(genInput(t.s.catalog, key), 0.01, newGenerationId())))
    await t.s.recorder.replaySpools()
    expect(existsSync(join(spoolDir(t), 'dead-peer.jsonl'))).toBe(true)
    t.s.recorder.record(genInput(t.s.catalog, key))
    await t.s.recorder.flush()
    expect(t.s.recorder.backlogged).toBe(false)
    await undo()
    await t.s.recorder.flush()
    await t.s.recorder.replaySpools()
    expect((await figures(t, key.id)).records).toBe(5)
  })
})
