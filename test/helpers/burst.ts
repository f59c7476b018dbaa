// A burst of 100 identical requests on a key funded for 5.5 of them: every answer is a 200 or a
// 402, and at most 7 are served (the covered ones, and one past the credit); and the same bound
// for a batch of 100 items. What the credit tests of every kind of hidden cost share.
import { expect } from 'bun:test'
import type { Gateway } from './server.ts'

export async function expectBurstBounded(send: () => Promise<Response>): Promise<void> {
  const statuses = await Promise.all(Array.from({ length: 100 }, async () => {
    const r = await send()
    await r.arrayBuffer()
    return r.status
  }))
  expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([])
  const served = statuses.filter((s) => s === 200).length
  expect(served).toBeGreaterThanOrEqual(1)
  expect(served).toBeLessThanOrEqual(7)
}

/**
 * A batch of 100 items on a key funded for 5.5 of them, made by `created`: it completes, and 6 or 7
 * items succeed (the covered ones, and one past the credit). Read as the operator: once spent, the
 * key is refused at the door (402), its batch too.
 */
export async function expectBatchBounded(gw: Gateway, created: Response): Promise<void> {
  const row = await completedBatch(gw, created)
  expect(row.succeeded).toBeGreaterThanOrEqual(6)
  expect(row.succeeded).toBeLessThanOrEqual(7)
}

/** The batch of 100 items `created` made, once it has ended: completed. */
export async function completedBatch(gw: Gateway, created: Response) {
  expect(created.status).toBe(200)
  const id = ((await created.json()) as { id: string }).id
  const store = gw.services.batches!.store
  for (let i = 0; i < 4_500 && !(await store.byId(id))!.endedAt; i++) await Bun.sleep(10)
  const row = (await store.byId(id))!
  expect(row).toMatchObject({ status: 'completed', total: 100 })
  return row
}

/** A POST as `key` would make it, on either family's surface (both of its auth headers). */
export function postAs(gw: Gateway, key: string, path: string, body: unknown): Promise<Response> {
  return fetch(gw.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) })
}

/**
 * What a key's requests in progress hold once their ends have been told, wherever the ledger
 * keeps it (a shared one hears of each end a few ms after it; a hold made ahead is given back unused).
 */
export async function heldOnceTold(gw: Gateway, keyId: string): Promise<number> {
  let usd = 0
  for (let i = 0; i < 100; i++) {
    const f = await gw.services.billing.figures(keyId)
    usd = f ? f.reserved : gw.services.billing.reserved(keyId)
    if (usd === 0) break
    await Bun.sleep(20)
  }
  return usd
}

/** `n` requests at once as `key`, then every one ended and recorded: what was served, refused (402) or failed (503), and what the key spent. */
export async function burstAs(gw: Gateway, key: { key: string; id: string }, path: string, body: unknown, n = 20) {
  const statuses = await Promise.all(Array.from({ length: n }, async () => {
    const r = await postAs(gw, key.key, path, body)
    await r.arrayBuffer()
    return r.status
  }))
  for (let i = 0; i < 200 && gw.services.billing.open > 0; i++) await Bun.sleep(10)
  await gw.services.recorder.flush()
  const row = await gw.services.storage.sql.get<{ spent: number }>('SELECT spent FROM api_keys WHERE id = ?', [key.id])
  const count = (status: number) => statuses.filter((s) => s === status).length
  return { served: count(200), refused: count(402), failed: count(503), spent: Number(row!.spent) }
}
