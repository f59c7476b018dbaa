// Experiment (docs/bench.md, "What a stored reply's item rows cost"): the CPU a stored Responses
// reply's write takes on SQLite as the store grows, with and without the rows that say which key
// was given each of its upstream item ids, and in other shapes of that table. Each shape gets a
// fresh store (the gateway's own schema and migrations); replies are written in transactions of
// `--batch`, one random `msg_…` item each, as the thread store writes them, checkpointing the WAL
// every 1,000 replies on this thread (the gateway's worker does it once a second, on the same
// core in the bench), and the CPU a reply is printed for each stretch of growth.
//   bun scripts/bench/experiments/stored-items.ts [--replies 300000] [--batch 12] [--shapes none,rows,...]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openSqlite } from '../../../src/db/client.ts'
import { insertList, names } from '../../../src/db/columns.ts'
import { storedItems, storedResponses } from '../../../src/db/schema.ts'

const { values } = parseArgs({
  options: {
    replies: { type: 'string', default: '300000' },
    batch: { type: 'string', default: '12' },
    shapes: { type: 'string', default: 'none,rows,norowindex,withoutrowid,hash' },
  },
})
const REPLIES = Number(values.replies)
const BATCH = Number(values.batch)
const STRETCH = Math.round(REPLIES / 6 / BATCH / 100) * BATCH * 100

const hex = (n: number) => crypto.randomUUID().replaceAll('-', '').slice(0, n)
// a reply's 64-bit id hash, as a signed integer SQLite stores in 8 bytes
const hash64 = (s: string) => BigInt.asIntN(64, Bun.hash.xxHash64(s))

const INSERTED = insertList(storedResponses)
const RESPONSE = `INSERT INTO ${names(storedResponses).$table} (${INSERTED.sql}) VALUES (${INSERTED.keys.map(() => '?').join(', ')})`
const ITEMS = names(storedItems)
const INPUT = JSON.stringify([{ type: 'message', role: 'user', content: 'What is the capital of France?' }])
const OBJECT = JSON.stringify({ object: 'response', status: 'completed', model: 'gpt-4.1-mini', usage: { input_tokens: 12, output_tokens: 9, total_tokens: 21 }, tools: [], text: { format: { type: 'text' } } })

interface Shape {
  setup?: string
  insert?: (n: number) => string
  params?: (key: string, item: string, row: string) => (string | bigint)[]
}
const rows3 = (n: number, table: string, cols: string) => `INSERT INTO ${table} (${cols}) VALUES ${Array(n).fill('(?, ?, ?)').join(', ')}`
const SHAPES: Record<string, Shape> = {
  // the reply alone: what the write cost before the item rows
  none: {},
  // as shipped: a rowid table, an index on (key, item) and one on the reply's row
  rows: { insert: (n) => rows3(n, ITEMS.$table, `${ITEMS.apiKeyId}, ${ITEMS.itemId}, ${ITEMS.rowId}`), params: (k, i, r) => [k, i, r] },
  // the same without the index on the reply's row (deleted by the ids its output holds)
  norowindex: {
    setup: 'DROP INDEX stored_items_row',
    insert: (n) => rows3(n, ITEMS.$table, `${ITEMS.apiKeyId}, ${ITEMS.itemId}, ${ITEMS.rowId}`),
    params: (k, i, r) => [k, i, r],
  },
  // one b-tree: the (key, item) key is the table
  withoutrowid: {
    setup: 'CREATE TABLE items_wr (api_key_id TEXT NOT NULL, item_id TEXT NOT NULL, row_id TEXT NOT NULL, PRIMARY KEY (api_key_id, item_id, row_id)) WITHOUT ROWID',
    insert: (n) => rows3(n, 'items_wr', 'api_key_id, item_id, row_id'),
    params: (k, i, r) => [k, i, r],
  },
  // one b-tree of 8-byte keys: a hash of the key and the item, the row beside it
  hash: {
    setup: 'CREATE TABLE items_hash (item_hash INTEGER NOT NULL, row_id TEXT NOT NULL, item_id TEXT NOT NULL, PRIMARY KEY (item_hash, row_id)) WITHOUT ROWID',
    insert: (n) => rows3(n, 'items_hash', 'item_hash, row_id, item_id'),
    params: (k, i, r) => [hash64(`${k}\0${i}`), r, i],
  },
}

for (const name of values.shapes!.split(',')) {
  const shape = SHAPES[name]
  if (!shape) throw new Error(`no shape ${name}`)
  const dir = mkdtempSync(join(tmpdir(), 'stored-items-'))
  const storage = openSqlite(dir)
  const sqlite = storage.sqlite!
  sqlite.exec('PRAGMA wal_autocheckpoint = 0')
  if (shape.setup) sqlite.exec(shape.setup)
  const reply = sqlite.prepare(RESPONSE)
  const items = shape.insert ? sqlite.prepare(shape.insert(BATCH)) : null
  const keys = ['key_a', 'key_b', 'key_c'].map((k) => `${k}_${hex(20)}`)
  const out: string[] = []
  let cpu0 = process.cpuUsage()
  for (let done = 0; done < REPLIES; ) {
    const params: (string | bigint)[] = []
    sqlite.transaction(() => {
      for (let b = 0; b < BATCH; b++, done++) {
        const key = keys[done % 3]!
        const rowId = `sr_${Bun.randomUUIDv7().replaceAll('-', '')}`
        const item = `msg_${hex(32)}${hex(16)}`
        const output = JSON.stringify([{ id: item, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text: 'The capital of France is Paris.' }] }])
        const row: Record<string, string | number | null> = {
          rowId, id: `resp_${hex(32)}${hex(16)}`, apiKeyId: key, model: 'gpt-4.1-mini', createdAt: Date.now(), status: 'completed',
          previousRowId: null, previousResponseId: null, conversation: null, inputItems: INPUT, outputItems: output, response: OBJECT,
          threadBytes: INPUT.length + output.length + OBJECT.length,
        }
        reply.run(...INSERTED.keys.map((k) => row[k] ?? null))
        if (shape.params) params.push(...shape.params(key, item, rowId))
      }
      if (items) items.run(...params)
    })()
    if (done % 1_000 === 0) sqlite.exec('PRAGMA wal_checkpoint(PASSIVE)')
    if (done % STRETCH === 0) {
      const c = process.cpuUsage(cpu0)
      out.push(`${((c.user + c.system) / STRETCH).toFixed(1)} (${(c.system / STRETCH).toFixed(1)} sys)`)
      cpu0 = process.cpuUsage()
    }
  }
  const size = Bun.file(join(dir, 'switchyard.db')).size
  console.log(`${name.padEnd(14)} µs CPU a reply by stretch of ${STRETCH.toLocaleString('en')}: ${out.join(' / ')}   file ${(size / REPLIES).toFixed(0)} bytes a reply`)
  await storage.close()
  rmSync(dir, { recursive: true, force: true })
}
