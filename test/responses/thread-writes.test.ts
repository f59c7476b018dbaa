// When stored responses are written: a save is written on the next turn of the loop (its
// reply's last bytes wait for that, so no timer may stand between), and a store that cannot
// write is tried again every 100 ms with everything saved meanwhile, not once a turn per save.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Sql } from '../../src/db/sql.ts'
import { ThreadStore, type StoredResponse } from '../../src/surfaces/responses/thread.ts'
import { testServices, type TestServices } from '../generations/services.ts'

let t: TestServices
beforeAll(async () => {
  t = await testServices()
})
afterAll(async () => {
  await t.close()
})

const response = (id: string): StoredResponse => ({
  id,
  apiKeyId: 'key_thread_writes',
  model: 'mock-gpt',
  status: 'completed',
  previousResponseId: null,
  previous: null,
  conversation: null,
  inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
  outputItems: [],
  response: { id, object: 'response', status: 'completed' },
})

/** The store's database, with its writing transactions counted and made to fail while `down`. */
function flaky(sql: Sql) {
  const state = { down: false, tries: 0 }
  const tx: Sql['tx'] = (fn, committed) => {
    state.tries++
    return state.down ? Promise.reject(new Error('disk full')) : sql.tx(fn, committed)
  }
  return { sql: new Proxy(sql, { get: (s, k) => (k === 'tx' ? tx : Reflect.get(s, k, s)) }), state }
}

test('a save is written on the next turn, not after a timer', async () => {
  const { sql, state } = flaky(t.s.storage.sql)
  const threads = new ThreadStore(sql)
  const saved = threads.save(response('resp_next_turn'))
  expect(state.tries).toBe(0)
  // a 0 ms timer would still be waiting here (Bun runs one after about a millisecond)
  await new Promise<void>((r) => setImmediate(r))
  expect(state.tries).toBe(1)
  await saved
  expect(await threads.retrieve('key_thread_writes', 'resp_next_turn')).toBeDefined()
})

test('a store that cannot write is tried again every 100 ms, with what was saved meanwhile', async () => {
  const { sql, state } = flaky(t.s.storage.sql)
  const threads = new ThreadStore(sql)
  state.down = true
  let committed = 0
  void threads.save(response('resp_down_1')).then(() => committed++)
  await Bun.sleep(5)
  expect(state.tries).toBe(1)
  // saved while the write waits to be tried again: readable, not written, and no attempt of their own
  for (let i = 2; i <= 20; i++) {
    void threads.save(response(`resp_down_${i}`)).then(() => committed++)
    await new Promise<void>((r) => setImmediate(r))
  }
  expect(state.tries).toBe(1)
  expect(await threads.retrieve('key_thread_writes', 'resp_down_7')).toBeDefined()
  state.down = false
  for (let i = 0; i < 100 && committed < 20; i++) await Bun.sleep(10)
  expect(committed).toBe(20)
  // the one attempt after the wait wrote all twenty
  expect(state.tries).toBe(2)
})

test("a write's item ids go in statements of many rows, past one statement's worth, every one kept", async () => {
  const store = new ThreadStore(t.s.storage.sql)
  const ids = (r: number) => Array.from({ length: 300 }, (_, n) => `msg_many_${r}_${n}`)
  for (const r of [1, 2]) store.save({ ...response(`resp_many_${r}`), outputItems: ids(r).map((id) => ({ type: 'message', id, role: 'assistant', content: [] })) })
  await store.flush()
  const all = [...ids(1), ...ids(2)]
  expect((await new ThreadStore(t.s.storage.sql).owned('key_thread_writes', all)).size).toBe(600)
  expect((await store.owned('another key', all)).size).toBe(0)
})
