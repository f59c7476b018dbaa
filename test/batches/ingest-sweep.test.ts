// A create in progress marks its items as owned by no batch yet (batch_ingests); a crash's
// leftovers are swept. Where other gateways share the database, a sweep at one's start took
// another's create in progress for a crash's: it removed the items stored so far, and the create
// went on to make a batch of its full count with only the rest of them. Now only markers older
// than any create takes are swept there, and a create whose marker was taken all the same is
// refused, never made with part of its items.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { onPostgres } from '../helpers/database.ts'
import { chat, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig()
})
afterAll(() => rig.stop())

const sql = () => rig.gw.services.storage.sql
const itemsOf = async (id: string) => (await sql().get<{ n: number }>('SELECT count(*) AS n FROM batch_items WHERE batch_id = ?', [id]))!.n

async function leftover(id: string, startedAt: number) {
  await sql().run('INSERT INTO batch_ingests (batch_id, started_at) VALUES (?, ?)', [id, startedAt])
  await sql().run("INSERT INTO batch_items (batch_id, idx, body, model, prompt_estimate) VALUES (?, 0, '{}', 'gpt-4o-mini', 1)", [id])
}

test.skipIf(!onPostgres)('on a shared database the sweep takes only creates older than any create runs: another gateway\'s create in progress keeps its items', async () => {
  await leftover('batch_sweep_live', Date.now())
  await leftover('batch_sweep_dead', Date.now() - 20 * 60_000)
  await rig.gw.services.batches!.scheduler.checkExpiry()
  expect(await itemsOf('batch_sweep_live')).toBe(1)
  expect(await itemsOf('batch_sweep_dead')).toBe(0)
  const markers = await sql().all<{ id: string }>("SELECT batch_id AS id FROM batch_ingests WHERE batch_id LIKE 'batch_sweep_%'")
  expect(markers.map((m) => m.id)).toEqual(['batch_sweep_live'])
})

test('a create whose marker a sweep took meanwhile is refused with a 503, and leaves no batch and no items', async () => {
  // as another gateway's sweep would, while this create stores its items
  if (onPostgres) {
    await sql().run('CREATE FUNCTION sweep_marker() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM batch_ingests; RETURN NULL; END $$')
    await sql().run('CREATE TRIGGER sweep_marker AFTER INSERT ON batch_items FOR EACH STATEMENT EXECUTE FUNCTION sweep_marker()')
  } else await sql().run('CREATE TRIGGER sweep_marker AFTER INSERT ON batch_items BEGIN DELETE FROM batch_ingests; END')
  try {
    const requests = Array.from({ length: 5 }, (_, i) => ({ custom_id: `s-${i}`, ...chat('gpt-4o-mini', `swept ${i}`) }))
    const res = await rig.call('POST', '/api/v1/batches', { requests })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBeTruthy()
    expect(String(((await res.json()) as { error: unknown }).error)).toContain('nothing was created')
  } finally {
    await sql().run('DROP TRIGGER IF EXISTS sweep_marker' + (onPostgres ? ' ON batch_items' : ''))
    if (onPostgres) await sql().run('DROP FUNCTION IF EXISTS sweep_marker()')
  }
  expect(((await (await rig.call('GET', '/api/v1/batches')).json()) as { data: unknown[] }).data).toEqual([])
  // its items go too (removed just after the refusal)
  for (let i = 0; i < 100; i++) {
    const left = await sql().get<{ n: number }>("SELECT count(*) AS n FROM batch_items WHERE batch_id NOT LIKE 'batch_sweep_%'")
    if (left!.n === 0) break
    await Bun.sleep(20)
  }
  expect((await sql().get<{ n: number }>("SELECT count(*) AS n FROM batch_items WHERE batch_id NOT LIKE 'batch_sweep_%'"))!.n).toBe(0)

}, 30_000)
