// Experiment (docs/bench.md, cluster mode): what a write's round trips cost the client on
// PostgreSQL through Bun.SQL. `tx`: BEGIN, three statements issued together, COMMIT, as the
// recorder's transaction was; `one`: the same work as one statement of CTEs. Run it under
// `strace -f -c -e trace=sendto,recvfrom` to count the sends: `tx` makes three round trips a
// write (BEGIN; the statements, pipelined once prepared on the connection; COMMIT), `one` one.
//   SWITCHYARD_TEST_DATABASE_URL=… bun scripts/bench/experiments/pg-round-trips.ts [tx|one] [writes]
import { SQL } from 'bun'

const [mode = 'tx', writes = '3000'] = process.argv.slice(2)
const url = process.env.SWITCHYARD_TEST_DATABASE_URL ?? process.env.SWITCHYARD_DATABASE_URL
if (!url) throw new Error('set SWITCHYARD_TEST_DATABASE_URL')
const sql = new SQL(url, { max: 1 })
await sql.unsafe('CREATE TEMP TABLE rt_rows (id text PRIMARY KEY, n int)')
await sql.unsafe('CREATE TEMP TABLE rt_sums (k text PRIMARY KEY, n int)')
await sql.unsafe("INSERT INTO rt_sums VALUES ('a', 0), ('b', 0)")

const n = Number(writes)
const cpu0 = process.cpuUsage()
const t0 = performance.now()
for (let i = 0; i < n; i++) {
  if (mode === 'tx') {
    await sql.begin(async (tx) => {
      await Promise.all([
        tx.unsafe('INSERT INTO rt_rows VALUES ($1, $2) ON CONFLICT DO NOTHING', ['r' + i, i]),
        tx.unsafe("UPDATE rt_sums SET n = n + $1 WHERE k = 'a'", [i]),
        tx.unsafe("UPDATE rt_sums SET n = n + $1 WHERE k = 'b'", [i]),
      ])
    })
  } else {
    await sql.unsafe(
      `WITH r AS (INSERT INTO rt_rows VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id),
        a AS (UPDATE rt_sums SET n = n + $2 WHERE k = 'a'),
        b AS (UPDATE rt_sums SET n = n + $2 WHERE k = 'b')
      SELECT id FROM r`,
      ['r' + i, i],
    )
  }
}
const cpu = process.cpuUsage(cpu0)
console.log(`${mode}: ${((performance.now() - t0) / n * 1000).toFixed(0)} µs a write (wall), ${((cpu.user + cpu.system) / n).toFixed(0)} µs of this process's CPU a write`)
await sql.close()
