// Experiment (docs/bench.md, "Records at scale"): what a record's insert costs on a SQLite
// store of a given size, and which pragma changes it. Writes `--batches` transactions of
// `--rows` records with random reply ids through the recorder's own statements
// (GenerationStore.insertRows), checkpointing the WAL as the gateway's worker does (here on
// this thread, so its cost is counted), and prints CPU µs a record, for each setting given.
//   bun scripts/bench/experiments/record-inserts.ts <data dir> [--rows 200] [--batches 250] [--pragmas "cache_size=-65536;mmap_size=1073741824"]...
import { parseArgs } from 'node:util'
import { openSqlite } from '../../../src/db/client.ts'
import { names } from '../../../src/db/columns.ts'
import { generations } from '../../../src/db/schema.ts'
import { COLUMNS, GenerationStore } from '../../../src/generations/store.ts'
import { newGenerationId, type GenerationRow } from '../../../src/generations/row.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rows: { type: 'string', default: '200' }, batches: { type: 'string', default: '250' }, pragmas: { type: 'string', multiple: true, default: [''] } },
})
const dir = positionals[0]
if (!dir) throw new Error('usage: record-inserts.ts <data dir> [--rows N] [--batches N] [--pragmas "a=b;c=d"]...')
const ROWS = Number(values.rows)
const BATCHES = Number(values.batches)

const g = names(generations)
for (const pragmas of values.pragmas!) {
  const storage = openSqlite(dir)
  const sqlite = storage.sqlite!
  for (const p of pragmas.split(';').filter(Boolean)) sqlite.exec(`PRAGMA ${p}`)
  sqlite.exec('PRAGMA wal_autocheckpoint = 0')
  const store = new GenerationStore(storage)
  // a record of the store as the template (the seeder's, or the gateway's)
  const like = sqlite.query(`SELECT ${COLUMNS} FROM ${g.$table} ORDER BY rowid DESC LIMIT 1`).get() as GenerationRow
  const n0 = (sqlite.query(`SELECT max(rowid) AS n FROM ${g.$table}`).get() as { n: number }).n
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let b = 0; b < BATCHES; b++) {
    const rows = Array.from({ length: ROWS }, (): GenerationRow => ({ ...like, id: newGenerationId(), replyId: 'chatcmpl-bench' + crypto.randomUUID().replaceAll('-', '').slice(0, 24), createdAt: Date.now() }))
    await storage.sql.tx((q) => store.insertRows(rows, q))
    // the gateway's worker checkpoints every second: at ~8,000 records a second, every 40 batches of 200
    if (b % Math.max(1, Math.round(8_000 / ROWS)) === 0) sqlite.exec('PRAGMA wal_checkpoint(PASSIVE)')
  }
  sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  const cpu = process.cpuUsage(cpu0)
  const us = (cpu.user + cpu.system) / (ROWS * BATCHES)
  console.log(`${(pragmas || 'defaults').padEnd(48)} at ${n0.toLocaleString('en')} records: ${us.toFixed(1)} µs CPU a record (${(cpu.system / (ROWS * BATCHES)).toFixed(1)} system), ${((performance.now() - t0) * 1000 / (ROWS * BATCHES)).toFixed(1)} µs wall`)
  await storage.close()
}
