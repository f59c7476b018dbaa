// Batches of several keys share the instance: one key's big batches must not make another
// key's small batch wait for them. Before, each batch ran at its own concurrency and took
// starts from the pace first come, first served: a 200-item batch waited behind thousands.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { batchShares, fairSplit, roundRobin } from '../../src/batches/fair-share.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

describe('shares', () => {
  test('a split never gives more than asked; what one leaves goes to the others; everyone gets one', () => {
    expect(fairSplit(128, [256, 64])).toEqual([64, 64])
    expect(fairSplit(128, [256, 10])).toEqual([118, 10])
    expect(fairSplit(10, [64])).toEqual([10])
    expect(fairSplit(2, [5, 5, 5])).toEqual([1, 1, 1])
    expect(fairSplit(100, [])).toEqual([])
  })

  test('keys first, then the batches of a key: four batches of one key share what one batch of another gets', () => {
    const shares = batchShares(128, [
      { id: 'a1', keyId: 'A', cap: 64 },
      { id: 'a2', keyId: 'A', cap: 64 },
      { id: 'a3', keyId: 'A', cap: 64 },
      { id: 'a4', keyId: 'A', cap: 64 },
      { id: 'b1', keyId: 'B', cap: 64 },
    ])
    expect(shares.get('b1')).toBe(64)
    expect(['a1', 'a2', 'a3', 'a4'].map((id) => shares.get(id))).toEqual([16, 16, 16, 16])
    // alone, a batch runs at its own concurrency
    expect(batchShares(128, [{ id: 'x', keyId: 'A', cap: 64 }]).get('x')).toBe(64)
  })

  test('the pace: starts go one at a time key by key; over rounds each key gets half, each batch of a key its part', () => {
    const batches = [
      { id: 'a1', keyId: 'A', cap: 64, room: 64 },
      { id: 'a2', keyId: 'A', cap: 64, room: 64 },
      { id: 'b1', keyId: 'B', cap: 64, room: 64 },
    ]
    const got = new Map<string, number>()
    for (let turn = 0; turn < 100; turn++) for (const [id, n] of roundRobin(5, batches, turn)) got.set(id, (got.get(id) ?? 0) + n)
    expect(got.get('b1')).toBe(250)
    expect(got.get('a1')! + got.get('a2')!).toBe(250)
    expect(Math.abs(got.get('a1')! - got.get('a2')!)).toBeLessThanOrEqual(5)
    // no more than a batch has room for; nothing for a batch with none
    const one = roundRobin(10, [{ id: 'a', keyId: 'A', cap: 3, room: 3 }, { id: 'b', keyId: 'B', cap: 3, room: 0 }], 0)
    expect(one.get('a')).toBe(3)
    expect(one.has('b')).toBe(false)
  })
})

describe('over HTTP, on the mock provider', () => {
  let gw: Gateway
  let keyA = ''
  let keyB = ''
  beforeAll(async () => {
    gw = await startGateway({ env: { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000', SWITCHYARD_IP_RPM: '1000000' } })
    keyA = (await gw.services.keys.create({ name: 'big batches' })).key
    keyB = (await gw.services.keys.create({ name: 'small batch' })).key
  })
  afterAll(async () => {
    await gw.stop()
  })

  async function create(key: string, n: number, tag: string): Promise<string> {
    const requests = Array.from({ length: n }, (_, i) => ({ custom_id: `${tag}-${i}`, model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text ${tag} ${i}` }] }))
    const res = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ requests }) })
    expect(res.status).toBe(200)
    return ((await res.json()) as { id: string }).id
  }
  const view = async (key: string, id: string) =>
    (await (await fetch(`${gw.url}/api/v1/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string; request_counts: { completed: number; failed: number; total: number } }

  test("a small batch of one key ends long before another key's big ones, which it joined late", async () => {
    const big = await Promise.all([create(keyA, 2_000, 'a0'), create(keyA, 2_000, 'a1')])
    await Bun.sleep(200)
    const small = await create(keyB, 200, 'b')
    const deadline = Date.now() + 30_000
    while ((await view(keyB, small)).status !== 'completed') {
      if (Date.now() > deadline) throw new Error('the small batch did not end')
      await Bun.sleep(20)
    }
    expect((await view(keyB, small)).request_counts.completed).toBe(200)
    // first come, first served would have run the 4,000 items first; shared, the small batch
    // took half the starts from when it came, so the big ones are far from done
    const done = (await Promise.all(big.map((id) => view(keyA, id)))).reduce((n, b) => n + b.request_counts.completed + b.request_counts.failed, 0)
    expect(done).toBeLessThan(2_500)
    for (const id of big) await fetch(`${gw.url}/api/v1/batches/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${keyA}` } })
  }, 60_000)
})
