// Cluster bench: what cluster mode (PostgreSQL + Redis, S3 for blobs) costs the chat
// pass-through against the embedded setup (SQLite, limits in memory). The gateway pinned to
// one core, started in turn in each setup; the fake upstream, the load driver, wrk, the
// bench's own Redis and the gateway's PostgreSQL backends on the other core
// (cluster-stores.ts). Per setup, alternating rounds, medians kept:
//   · 1,000 req/s open loop: latency p50/p99 from the send, gateway CPU a request;
//   · closed loop at 64 connections (wrk, else a Bun driver): req/s, gateway CPU a request.
// Each setup twice: with an unlimited key (the bootstrap key), and with a funded key, whose
// every request also holds its worst case against the key's credit and settles its cost.
// The targets: cluster ≥ 85 % of embedded req/s, CPU a request within +10 µs, p50 at
// 1,000 req/s within +0.3 ms.
//
//   bun scripts/bench/cluster.ts [--rounds 3] [--quick] [--root DIR] [--render]
// (--root: the gateway of another checkout, for a before/after of a change; nothing written.
// --render: the section again from cluster-results.json, no run)
//
// `npm run bench` runs it last. Writes scripts/bench/cluster-results.json and the figures
// part of docs/bench.md's "Cluster mode" section (not with --quick).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chatCall, fundedKey, probe } from './call.ts'
import { openStores, storesMissing, type ClusterStores } from './cluster-stores.ts'
import { clusterSection, type ClusterBench, type Figures } from './cluster-report.ts'
import { closedLoop, WRK_MISSING, wrkPath } from './closedloop.ts'
import { openLoop } from './openloop.ts'
import { PASS_MODEL } from './paths.ts'
import { cpuSecondsOf, machine, metered } from './proc.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream, type Child } from './processes.ts'
import { medianBy } from './stats.ts'

const CONNECTIONS = 64
const RATE = 1000
export const RESULTS = join(import.meta.dir, 'cluster-results.json')
const DOC = join(ROOT, 'docs', 'bench.md')

export interface ClusterOptions {
  quick?: boolean
  rounds?: number
  /** Run the gateway of another checkout (a before/after). */
  root?: string
  log?: (msg: string) => void
}

type Setup = 'embedded' | 'cluster'
const ADMIN = 'bench-admin-' + crypto.randomUUID()

export async function measure(setup: Setup, ctx: { upstream: Child; stores: ClusterStores; cores: [number, number]; key: string; phase: Phase; root?: string; funded?: boolean }): Promise<Figures> {
  const { upstream, stores, cores, phase } = ctx
  const gw = await spawnGateway({ core: cores[1], upstream: upstream.url, key: ctx.key, root: ctx.root, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, ...(setup === 'cluster' ? stores.env : {}) } })
  try {
    const key = ctx.funded ? await fundedKey(gw.url, ADMIN) : ctx.key
    const call = chatCall('chat pass-through', `${gw.url}/api/alpha/v1`, key, PASS_MODEL)
    await probe(call)
    await closedLoop(call, { connections: CONNECTIONS, durationS: phase.warmS, core: cores[0] })
    // and at the measured rate, unmeasured: code that runs only when requests come one a turn
    // (what a busy key takes ahead, which a crowded loop never does) is compiled here, not in
    // the window measured (with 1 s of it, the JIT thread took 55-140 us a request over the
    // first 8 s measured, 5-25 over the next)
    if (phase.warmOpenMs) await openLoop(call, RATE, phase.warmOpenMs)
    const redis = stores.redisPid ? [stores.redisPid] : []
    const backends = async () => (setup === 'cluster' ? await stores.pin(gw.pid) : [])
    const open = await metered({ gateway: gw.pid, others: [upstream.pid, ...redis, ...(await backends())] }, () => openLoop(call, RATE, phase.openMs))
    const pg = await backends()
    const before = { redis: cpuSecondsOf(redis), pg: cpuSecondsOf(pg) }
    const closed = await metered({ gateway: gw.pid, others: [upstream.pid, ...redis, ...pg] }, () => closedLoop(call, { connections: CONNECTIONS, durationS: phase.closedS, core: cores[0] }), (r) => r.loadCpuS)
    const perRequest = (cpuS: number) => (cpuS * 1e6) / closed.result.requests
    const openErrors = Object.values(open.result.errors).reduce((a, b) => a + b, 0)
    return {
      rps: closed.result.rps,
      cpuUsAtSaturation: (closed.gatewayCpuS * 1e6) / closed.result.requests,
      coreBusy: closed.gatewayCpuS / closed.wallS,
      redisCpuUsAtSaturation: perRequest(cpuSecondsOf(redis) - before.redis),
      pgCpuUsAtSaturation: perRequest(cpuSecondsOf(pg) - before.pg),
      cpuUsAtRate: (open.gatewayCpuS * 1e6) / open.result.ok,
      p50Ms: open.result.latency.p50,
      p99Ms: open.result.latency.p99,
      errors: openErrors + closed.result.errors,
      otherCores: Math.max(open.otherCores, closed.otherCores),
    }
  } finally {
    await gw.stop()
  }
}

export interface Phase {
  openMs: number
  closedS: number
  warmS: number
  /** Unmeasured, at the open loop's rate, after the closed warm-up (absent in runs before 2026-12-02). */
  warmOpenMs?: number
}

/** The median of each figure over the rounds (each figure on its own). */
function medians(rows: Figures[]): Figures {
  const keys = Object.keys(rows[0]!) as (keyof Figures)[]
  return Object.fromEntries(keys.map((k) => [k, medianBy(rows, (r) => r[k])![k]])) as unknown as Figures
}

/** The phase: undefined (and a line saying why) when PostgreSQL or Redis is not at hand. */
export async function clusterPhase(o: ClusterOptions = {}): Promise<ClusterBench | undefined> {
  const log = o.log ?? ((m: string) => process.stderr.write(`· ${m}\n`))
  const missing = storesMissing()
  if (missing) {
    log(`cluster phase skipped: ${missing}`)
    return undefined
  }
  const phase: Phase = o.quick ? { openMs: 3000, closedS: 3, warmS: 1, warmOpenMs: 1000 } : { openMs: 8000, closedS: 8, warmS: 2, warmOpenMs: 6000 }
  const rounds = o.rounds ?? (o.quick ? 1 : 3)
  const n = cpus().length
  const cores: [number, number] = n >= 2 ? [0, 1] : [0, 0]
  const notes: string[] = []
  if (!pinSelf(cores[0])) notes.push('could not pin the load driver (taskset failed)')
  if (!wrkPath()) notes.push(WRK_MISSING)
  if (o.quick) notes.push('quick run: short phases, rough figures')
  if (o.root) notes.push(`the gateway of ${o.root}`)
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').trim()
  const stores = await openStores(cores[0])
  const upstream = await spawnUpstream(cores[0]).catch(async (e) => {
    await stores.close()
    throw e
  })
  const rows: Required<ClusterBench['rows']> = { embedded: [], cluster: [], embeddedFunded: [], clusterFunded: [] }
  try {
    for (let r = 1; r <= rounds; r++) {
      for (const [row, setup, funded] of [['embedded', 'embedded', false], ['cluster', 'cluster', false], ['embeddedFunded', 'embedded', true], ['clusterFunded', 'cluster', true]] as const) {
        const f = await measure(setup, { upstream, stores, cores, key, phase, root: o.root, funded })
        rows[row].push(f)
        if (f.otherCores > 0.1) log(`  noisy: other processes used ${(f.otherCores * 100).toFixed(0)}% of a core`)
        log(`round ${r}, ${setup}${funded ? ', funded key' : ''}: ${Math.round(f.rps)} req/s at ${CONNECTIONS} connections, ${f.cpuUsAtSaturation.toFixed(1)} µs CPU/request; at ${RATE} req/s p50 ${f.p50Ms.toFixed(2)} ms, p99 ${f.p99Ms.toFixed(2)} ms, ${f.cpuUsAtRate.toFixed(1)} µs CPU/request${f.errors ? `; ${f.errors} errors` : ''}`)
      }
    }
  } finally {
    await upstream.stop()
    await stores.close()
  }
  return {
    date: new Date().toISOString(),
    machine: machine(),
    loadAvg: { before: loadBefore, after: readFileSync('/proc/loadavg', 'utf8').trim() },
    tool: wrkPath() ? 'wrk' : 'bun',
    rounds,
    phase,
    connections: CONNECTIONS,
    rate: RATE,
    stores: stores.describe,
    notes,
    embedded: medians(rows.embedded),
    cluster: medians(rows.cluster),
    funded: { embedded: medians(rows.embeddedFunded), cluster: medians(rows.clusterFunded) },
    rows,
  }
}

const rounded = (_: string, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v)

/** Save the figures and put them in docs/bench.md's "Cluster mode" section. */
export function writeCluster(b: ClusterBench) {
  writeFileSync(RESULTS, JSON.stringify(b, rounded, 2) + '\n')
  if (existsSync(DOC)) writeFileSync(DOC, clusterSection(readFileSync(DOC, 'utf8'), b))
}

if (import.meta.main) {
  const { values: flags } = parseArgs({ options: { rounds: { type: 'string' }, quick: { type: 'boolean' }, root: { type: 'string' }, render: { type: 'boolean' } } })
  if (flags.render) {
    writeFileSync(DOC, clusterSection(readFileSync(DOC, 'utf8'), JSON.parse(readFileSync(RESULTS, 'utf8')) as ClusterBench))
    console.log('wrote the Cluster mode figures in docs/bench.md from scripts/bench/cluster-results.json')
    process.exit(0)
  }
  const b = await clusterPhase({ quick: flags.quick, rounds: flags.rounds ? Number(flags.rounds) : undefined, root: flags.root })
  if (b) {
    console.log(JSON.stringify({ embedded: b.embedded, cluster: b.cluster, funded: b.funded }, rounded, 2))
    if (!flags.quick && !flags.root) {
      writeCluster(b)
      console.log('wrote scripts/bench/cluster-results.json and docs/bench.md (Cluster mode)')
    }
  }
}
