// Bench phase: the records at scale. Seeds N generation records (default 10,000,000; random
// reply ids, time-ordered gateway ids, spread over 89 days, with their hourly rollup rows)
// straight into a store (records-seed.ts), then runs two gateways on core 1, one on an empty
// store and one on the seeded one, behind the fake upstream with random ids (BENCH_IDS=random),
// and measures on each store:
// - gateway CPU per chat request in 64-connection closed loops, the two gateways alternating;
// - a record looked up by its gateway id and by its reply id, the first page of the listing
//   (the key's and the admin's), the 30-day usage report: p50 / p99 over sequential calls;
// - disk bytes per record (SQLite: the file; PostgreSQL: the tables with their indexes);
// - pruning: one day of records deleted in the recorder's steps, each step timed.
// PostgreSQL (SWITCHYARD_BENCH_DATABASE_URL or SWITCHYARD_TEST_DATABASE_URL) runs in schemas of
// its own, dropped at the end.
// Writes scripts/bench/records-results.json (not with --no-write).
//   bun scripts/bench/records-scale.ts [--records 10000000] [--store sqlite|pg|both] [--seconds 10] [--rounds 3] [--calls 1000] [--no-write]
import { SQL } from 'bun'
import { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openStorage, type Storage } from '../../src/db/client.ts'
import { PRUNE_CHUNK } from '../../src/generations/recorder.ts'
import { GenerationStore } from '../../src/generations/store.ts'
import { probe, type Call } from './call.ts'
import { closedLoop } from './closedloop.ts'
import { surfaceCall } from './paths.ts'
import { cpuSeconds } from './proc.ts'
import { pinSelf, ROOT, spawnListening, spawnUpstream, type Child } from './processes.ts'
import { printPlans } from './records-plans.ts'
import { sampleIds, seedRecords, SPAN_MS, type Seeded } from './records-seed.ts'
import { summarize } from './stats.ts'

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '10000000' },
    store: { type: 'string', default: 'both' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    calls: { type: 'string', default: '1000' },
    'no-write': { type: 'boolean' },
  },
})
const N = Number(values.records)
const SECONDS = Number(values.seconds)
const ROUNDS = Number(values.rounds)
const CALLS = Number(values.calls)
const DAY = 86_400_000
const ADMIN = 'sy-admin-' + crypto.randomUUID().replaceAll('-', '')
const PG_URL = process.env.SWITCHYARD_BENCH_DATABASE_URL ?? process.env.SWITCHYARD_TEST_DATABASE_URL
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ')

interface Place {
  /** The gateway's environment for this store. */
  env: Record<string, string>
  dataDir: string
  open(): Promise<Storage>
  /** Bytes the records take (with the rollup, the indexes and the keys). */
  bytes(): Promise<number>
  /** After the load: what the database would do on its own soon after (PostgreSQL: vacuum the table). */
  settle(): Promise<void>
  drop(): Promise<void>
}

function sqlitePlace(): Place {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-records-'))
  return {
    env: {},
    dataDir,
    open: () => openStorage(dataDir),
    async bytes() {
      return readdirSync(dataDir).reduce((n, f) => n + statSync(join(dataDir, f)).size, 0)
    },
    async settle() {},
    async drop() {
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function pgPlace(admin: SQL): Promise<Place> {
  const schema = `sy_records_${crypto.randomUUID().slice(0, 8)}`
  await admin.unsafe(`CREATE SCHEMA ${schema}`)
  const u = new URL(PG_URL!)
  u.searchParams.set('search_path', schema)
  const url = u.toString()
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-records-pg-'))
  return {
    env: { SWITCHYARD_DATABASE_URL: url },
    dataDir,
    open: () => openStorage({ dataDir, databaseUrl: url }),
    async bytes() {
      const [r] = (await admin.unsafe(`SELECT sum(pg_total_relation_size(c.oid))::bigint AS b FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${schema}' AND c.relkind = 'r'`)) as { b: bigint }[]
      return Number(r!.b)
    },
    async settle() {
      // autovacuum would run on a freshly loaded table minutes later, in the middle of the run
      await admin.unsafe(`VACUUM (ANALYZE) ${schema}.generations`)
    },
    async drop() {
      await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Waits (at most 5 minutes) until the kernel has written out the load's pages: gigabytes of
 * dirty pages flushed under the gateway stall every fsync (the WAL's) for seconds.
 */
async function diskSettled(): Promise<number> {
  const started = performance.now()
  let quiet = 0
  while (quiet < 5 && performance.now() - started < 300_000) {
    const info = readFileSync('/proc/meminfo', 'utf8')
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(info)?.[1] ?? 0)
    quiet = kb('Dirty') + kb('Writeback') < 64 * 1024 ? quiet + 1 : 0
    await Bun.sleep(1_000)
  }
  return (performance.now() - started) / 1000
}

/** The gateway (`serve`) pinned to core 1 on a store already made, with the admin token set. */
function spawnOn(place: Place, upstream: string, key: string): Promise<Child> {
  const serve = ['taskset', '-c', '1', process.execPath, join(ROOT, 'src/main.ts'), 'serve', '--port', '0', '--data-dir', place.dataDir, '--log-level', 'info']
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    OPENAI_API_KEY: 'sk-bench-upstream',
    OPENAI_BASE_URL: upstream + '/v1',
    SWITCHYARD_BOOTSTRAP_KEY: key,
    SWITCHYARD_ADMIN_TOKEN: ADMIN,
    // far above the closed loop's rate: limits are checked but never bind
    SWITCHYARD_KEY_RPM: '1500000',
    SWITCHYARD_IP_RPM: '1500000',
    SWITCHYARD_KEY_BURST_RPS: '100000',
    ...place.env,
  }
  return spawnListening(serve, { env, cwd: place.dataDir })
}

async function prepare(place: Place, n: number): Promise<{ seeded: Seeded; ids: { id: string; replyId: string; keyId: string }[] }> {
  const storage = await place.open()
  try {
    let last = performance.now()
    const seeded = await seedRecords(storage, n, (done) => {
      if (performance.now() - last < 30_000 && done < n) return
      last = performance.now()
      console.log(`  seeded ${done.toLocaleString('en')} records (load ${load()})`)
    })
    const ids = n > 0 ? await sampleIds(storage, n, CALLS) : []
    return { seeded, ids }
  } finally {
    await storage.close()
  }
}

/** p50 / p99 (ms) of `calls` sequential GETs, each checked. */
async function timed(label: string, urls: string[], headers: Record<string, string>, expect: (body: any) => boolean) {
  for (const url of urls.slice(0, 20)) await (await fetch(url, { headers })).arrayBuffer()
  const ms: number[] = []
  for (const url of urls) {
    const a = performance.now()
    const r = await fetch(url, { headers })
    const body = await r.json()
    ms.push(performance.now() - a)
    if (r.status !== 200 || !expect(body)) throw new Error(`${label}: ${r.status} ${JSON.stringify(body).slice(0, 300)}`)
  }
  const s = summarize(ms)
  console.log(`  ${label.padEnd(40)} p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  max ${s.max.toFixed(2)} ms  (${s.n} calls)`)
  return { p50: s.p50, p99: s.p99 }
}

/** Deletes one day of the oldest records in the recorder's steps, each timed. */
async function pruneDay(place: Place, keyId: string) {
  const storage = await place.open()
  try {
    await printPlans(storage, keyId)
    const store = new GenerationStore(storage)
    // as in the gateway: the WAL is checkpointed beside the steps, on a connection of its own (its worker's)
    storage.sqlite?.exec('PRAGMA wal_autocheckpoint = 0')
    const checkpoints = storage.file ? new Database(storage.file) : undefined
    let checkpointed = performance.now()
    const before = Date.now() - SPAN_MS + DAY
    const ms: number[] = []
    let total = 0
    for (;;) {
      const a = performance.now()
      const n = await store.pruneSome(before, PRUNE_CHUNK)
      ms.push(performance.now() - a)
      total += n
      if (n < PRUNE_CHUNK) break
      // and the recorder pauses as long as the step took
      await Bun.sleep(Math.max(1, ms.at(-1)!))
      if (checkpoints && performance.now() - checkpointed > 1_000) {
        checkpoints.exec('PRAGMA wal_checkpoint(PASSIVE)')
        checkpointed = performance.now()
      }
    }
    checkpoints?.close()
    const s = summarize(ms)
    console.log(`  pruning one day (${total.toLocaleString('en')} records): ${ms.length} steps of ${PRUNE_CHUNK}, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`)
    return { records: total, steps: ms.length, p50: s.p50, p99: s.p99, max: s.max }
  } finally {
    await storage.close()
  }
}

async function runStore(kind: 'sqlite' | 'pg', upstream: string, admin?: SQL) {
  console.log(`\n${kind === 'sqlite' ? 'SQLite (embedded)' : 'PostgreSQL'}: ${N.toLocaleString('en')} records (load ${load()})`)
  const places = kind === 'sqlite' ? [sqlitePlace(), sqlitePlace()] : [await pgPlace(admin!), await pgPlace(admin!)]
  const [emptyPlace, fullPlace] = places as [Place, Place]
  const gateways: Child[] = []
  try {
    const empty = await prepare(emptyPlace, 0)
    const t0 = performance.now()
    const full = await prepare(fullPlace, N)
    const seedS = (performance.now() - t0) / 1000
    console.log(`  seeded in ${seedS.toFixed(0)} s (${Math.round(N / full.seeded.seconds).toLocaleString('en')} records/s)`)
    const v0 = performance.now()
    await fullPlace.settle()
    const settledS = await diskSettled()
    console.log(`  settled: ${kind === 'pg' ? `VACUUM (ANALYZE) in ${((performance.now() - v0) / 1000 - settledS).toFixed(0)} s, then ` : ''}dirty pages written out in ${settledS.toFixed(0)} s`)
    const bytes = await fullPlace.bytes()
    console.log(`  disk: ${(bytes / 2 ** 20).toFixed(0)} MiB, ${(bytes / N).toFixed(0)} bytes a record`)

    const sides = []
    for (const [name, place, p] of [['empty', emptyPlace, empty], ['seeded', fullPlace, full]] as const) {
      const gw = await spawnOn(place, upstream, p.seeded.key)
      gateways.push(gw)
      const call: Call = surfaceCall('chat', gw.url, p.seeded.key)
      await probe(call)
      sides.push({ name, gw, call, us: [] as number[], rps: [] as number[] })
    }
    // warm both, then alternate so a change in the machine's load falls on both alike
    for (const s of sides) await closedLoop(s.call, { connections: 64, durationS: 3, core: 0 })
    for (let r = 0; r < ROUNDS; r++)
      for (const s of sides) {
        const c0 = cpuSeconds(s.gw.pid)
        const x = await closedLoop(s.call, { connections: 64, durationS: SECONDS, core: 0 })
        s.us.push(((cpuSeconds(s.gw.pid) - c0) * 1e6) / x.requests)
        s.rps.push(x.rps)
        if (x.errors > 0) console.log(`  ${s.name}: ${x.errors} errors in a round`)
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
    const cpu = Object.fromEntries(sides.map((s) => [s.name, { us: median(s.us), rps: median(s.rps), rounds: s.us.map((u) => u.toFixed(0)) }]))
    for (const s of sides) console.log(`  CPU a chat request, ${s.name.padEnd(6)}: median ${cpu[s.name]!.us.toFixed(0)} µs (rounds ${cpu[s.name]!.rounds.join(', ')}), ${cpu[s.name]!.rps.toFixed(0)} req/s (load ${load()})`)
    const ratio = cpu.seeded!.us / cpu.empty!.us
    console.log(`  seeded / empty: ${ratio.toFixed(3)}`)

    const gw = sides[1]!.gw
    const base = `${gw.url}/api/v1`
    const all = full.ids
    const mine = all.filter((r) => r.keyId === full.seeded.keyId)
    const key = { authorization: `Bearer ${full.seeded.key}` }
    const adm = { authorization: `Bearer ${ADMIN}` }
    const found = (b: any) => typeof b?.generation?.gateway_id === 'string'
    const times = {
      byGatewayId: await timed('lookup by gateway id (the key)', mine.map((r) => `${base}/generations?id=${r.id}`), key, found),
      byReplyId: await timed('lookup by reply id (the key)', mine.map((r) => `${base}/generations?id=${r.replyId}`), key, found),
      byReplyIdAdmin: await timed('lookup by reply id (admin)', all.map((r) => `${base}/generations?id=${r.replyId}`), adm, found),
      firstPage: await timed('first page of the listing (the key)', Array(200).fill(`${base}/generations`), key, (b) => b?.data?.length === 50),
      firstPageAdmin: await timed('first page of the listing (admin)', Array(200).fill(`${base}/generations`), adm, (b) => b?.data?.length === 50),
      report: await timed('30-day usage report (the key)', Array(200).fill(`${base}/usage?timeframe=30d`), key, (b) => b?.totals?.total_requests > 0),
      reportAdmin: await timed('30-day usage report (admin)', Array(200).fill(`${base}/usage?timeframe=30d`), adm, (b) => b?.totals?.total_requests > 0),
    }
    for (const g of gateways.splice(0)) await g.stop()
    const prune = await pruneDay(fullPlace, full.seeded.keyId)
    return { kind, records: N, seedSeconds: seedS, bytesPerRecord: bytes / N, cpu, ratio, times, prune, load: load() }
  } finally {
    for (const g of gateways) await g.stop()
    for (const p of places) await p.drop()
  }
}

pinSelf(0)
const up = await spawnUpstream(0, { BENCH_IDS: 'random' })
const results: Awaited<ReturnType<typeof runStore>>[] = []
try {
  if (values.store !== 'pg') results.push(await runStore('sqlite', up.url))
  if (values.store !== 'sqlite') {
    if (!PG_URL) console.log('\nPostgreSQL: skipped (set SWITCHYARD_BENCH_DATABASE_URL or SWITCHYARD_TEST_DATABASE_URL)')
    else {
      const admin = new SQL({ url: PG_URL, max: 1 })
      try {
        results.push(await runStore('pg', up.url, admin))
      } finally {
        await admin.close()
      }
    }
  }
} finally {
  await up.stop()
}
console.log('\nRESULT ' + JSON.stringify(results))
if (!values['no-write']) {
  // a run of one store keeps the other's last figures
  const file = join(import.meta.dir, 'records-results.json')
  const kept = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')).results as { kind: string }[]).filter((r) => !results.some((x) => x.kind === r.kind)) : []
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), cpus: cpus().length, results: [...kept, ...results.map((r) => ({ ...r, at: new Date().toISOString() }))] }, null, 2) + '\n')
  console.log('wrote scripts/bench/records-results.json')
}
process.exit(0)
