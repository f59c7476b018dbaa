// Experiment (docs/bench.md, cluster mode): what a chat pass-through request costs at an open
// 1,000 req/s, by thread of the gateway (user and system CPU, and how often each thread was
// woken or preempted, from /proc), with Redis's own count of the commands and script calls it
// ran and PostgreSQL's of the transactions it committed. Setups and trees in turn per round,
// the gateway on core 1, the stores, upstream and driver on core 0, as in cluster.ts.
//   bun scripts/bench/experiments/cluster-wakes.ts <setup>[@tree][+VAR=value …][,…] [rounds] [unlimited|funded]
// setups: embedded, cluster, bare (the bare proxy). WARM_OPEN_MS: unmeasured time at the rate
// first (default 6000); WINDOWS: measured windows of 8 s in a row (JIT warm-up shows in the
// first); MONITOR=1: Redis's MONITOR for a second of the window, in /tmp/monitor.txt;
// CLOSED=1: then a closed loop at 64 connections, or CONNECTIONS (req/s, how busy the gateway's
// core was, Redis's counts a request, the CPU a request of Redis and of the gateway's
// PostgreSQL backends, and the gateway's by thread); PERF=<file> samples its core with perf.
import { readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { RedisClient } from 'bun'
import { chatCall, fundedKey, probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { openStores } from '../cluster-stores.ts'
import { openLoop } from '../openloop.ts'
import { PASS_MODEL } from '../paths.ts'
import { cpuSecondsOf, memory } from '../proc.ts'
import { pinSelf, ROOT, settingsEnv, spawnBareProxy, spawnGateway, spawnUpstream } from '../processes.ts'

const [setups = 'embedded,cluster', rounds = '2', which = 'unlimited'] = process.argv.slice(2)
const HZ = 100
/** The closed loop's connections (CONNECTIONS=…). */
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 64)
const ADMIN = 'bench-admin-' + crypto.randomUUID()
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')

interface Thread {
  name: string
  user: number
  sys: number
  woken: number
  preempted: number
  /** Minor page faults (memory the thread touched that the kernel had to map). */
  faults: number
}

function threads(pid: number): Record<string, Thread> {
  const out: Record<string, Thread> = {}
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
      const count = (what: string) => Number(new RegExp(`^${what}:\\s+(\\d+)`, 'm').exec(status)![1])
      out[tid] = {
        name: tid === String(pid) ? 'request thread' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        user: Number(f[11]) / HZ,
        sys: Number(f[12]) / HZ,
        faults: Number(f[7]),
        woken: count('voluntary_ctxt_switches'),
        preempted: count('nonvoluntary_ctxt_switches'),
      }
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out
}

/** The gateway's resident memory now and at its peak. */
function rss(pid: number): string {
  const m = memory(pid)
  return `RSS ${m.rssMiB.toFixed(0)} MiB, peak ${m.hwmMiB.toFixed(0)} MiB`
}

/** Each thread's CPU and switches between two reads, by thread name. */
function threadsBetween(t0: Record<string, Thread>, t1: Record<string, Thread>): Thread[] {
  const by: Record<string, Thread> = {}
  for (const tid in t1) {
    const a = t0[tid] ?? { user: 0, sys: 0, woken: 0, preempted: 0, faults: 0 }
    const b = t1[tid]!
    const e = (by[b.name] ??= { name: b.name, user: 0, sys: 0, woken: 0, preempted: 0, faults: 0 })
    e.user += b.user - a.user
    e.sys += b.sys - a.sys
    e.woken += b.woken - a.woken
    e.preempted += b.preempted - a.preempted
    e.faults += b.faults - a.faults
  }
  return Object.values(by)
}

/** Each thread's share a request, busiest first (threads that barely ran left out). */
function printThreads(all: Thread[], n: number) {
  const us = (s: number) => ((s * 1e6) / n).toFixed(0)
  for (const t of all.sort((a, b) => b.user + b.sys - a.user - a.sys)) {
    if (t.user + t.sys < n * 1e-6 && t.woken < n * 0.05) continue
    console.log(`    ${t.name}: user ${us(t.user)} sys ${us(t.sys)} µs, woken ${(t.woken / n).toFixed(2)}, preempted ${(t.preempted / n).toFixed(2)}, page faults ${(t.faults / n).toFixed(2)}`)
  }
}

pinSelf(0)
const up = await spawnUpstream(0)
const stores = await openStores(0)
const redis = new RedisClient(stores.env.SWITCHYARD_REDIS_URL!)
const pg = new Bun.SQL(stores.env.SWITCHYARD_DATABASE_URL!, { max: 1 })

/** Commands Redis ran (those its scripts ran included) and script calls. */
async function redisCounts(): Promise<[number, number]> {
  const info = String(await redis.send('INFO', ['commandstats']))
  let commands = 0
  let scripts = 0
  for (const m of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    if (m[1] === 'info') continue
    commands += Number(m[2])
    if (m[1]!.startsWith('eval')) scripts += Number(m[2])
  }
  return [commands, scripts]
}
async function commits(): Promise<number> {
  const [row] = await pg`SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = current_database()`
  return Number(row.n)
}

try {
  for (let round = 1; round <= Number(rounds); round++) {
    for (const spec of setups.split(',')) {
      const [where, settings = ''] = spec.split('+')
      const [setup, tree] = where!.split('@')
      const root = tree ? resolve(tree) : ROOT
      const gw =
        setup === 'bare'
          ? await spawnBareProxy(1, up.url, settingsEnv(settings))
          : await spawnGateway({ core: 1, upstream: up.url, key: bootstrap, root, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, ...(setup === 'cluster' ? stores.env : {}), ...settingsEnv(settings) } })
      try {
        const key = which === 'funded' && setup !== 'bare' ? await fundedKey(gw.url, ADMIN, 'funded') : bootstrap
        const call = chatCall('chat', `${gw.url}/api/alpha/v1`, key, PASS_MODEL)
        await probe(call)
        await closedLoop(call, { connections: 64, durationS: 2, core: 0 })
        if (setup === 'cluster') await stores.pin(gw.pid)
        await openLoop(call, 1000, Number(process.env.WARM_OPEN_MS ?? 6000))
        for (let w = 1; w <= Number(process.env.WINDOWS ?? 1); w++) {
          const [c0, s0] = await redisCounts()
          const x0 = await commits()
          const t0 = threads(gw.pid)
          const monitor = process.env.MONITOR ? Bun.spawn(['bash', '-c', `timeout 1 redis-cli -u ${stores.env.SWITCHYARD_REDIS_URL} monitor > /tmp/monitor.txt`]) : undefined
          const r = await openLoop(call, 1000, 8000)
          await monitor?.exited
          const t1 = threads(gw.pid)
          const [c1, s1] = await redisCounts()
          await Bun.sleep(1_500) // PostgreSQL's statistics lag
          const x1 = await commits()
          const n = r.sent
          const all = threadsBetween(t0, t1)
          const total = all.reduce((a, t) => a + t.user + t.sys, 0)
          console.log(
            `round ${round} window ${w} ${spec} ${which}: p50 ${r.latency.p50.toFixed(2)} ms, CPU a request ${((total * 1e6) / n).toFixed(0)} µs; ` +
              `a request: Redis commands ${((c1 - c0) / n).toFixed(3)}, script calls ${((s1 - s0) / n).toFixed(3)}, PostgreSQL commits ${((x1 - x0) / n).toFixed(3)}`,
          )
          printThreads(all, n)
          console.log(`    ${rss(gw.pid)}`)
        }
        if (process.env.CLOSED) {
          const [c0, s0] = await redisCounts()
          const pids = { gateway: [gw.pid], redis: stores.redisPid ? [stores.redisPid] : [], pg: setup === 'cluster' ? await stores.pin(gw.pid) : [] }
          const cpu = () => ({ gateway: cpuSecondsOf(pids.gateway), redis: cpuSecondsOf(pids.redis), pg: cpuSecondsOf(pids.pg) })
          const before = cpu()
          const t0 = threads(gw.pid)
          // PERF=<file>: the gateway's core sampled by perf over 5 s of the closed loop (perf report -i <file>.<setup>[-b for a tree].<round>)
          const perf = process.env.PERF ? Bun.spawn(['perf', 'record', '-q', '-C', '1', '-o', `${process.env.PERF}.${setup}${tree ? '-b' : ''}${settings ? '-s' : ''}.${round}`, '--', 'sleep', '5'], { stdout: 'ignore', stderr: 'ignore' }) : undefined
          const c = await closedLoop(call, { connections: CONNECTIONS, durationS: 8, core: 0 })
          await perf?.exited
          const after = cpu()
          const closedThreads = threadsBetween(t0, threads(gw.pid))
          const [c1, s1] = await redisCounts()
          const n = c.requests
          const us = (k: keyof typeof after) => (((after[k] - before[k]) * 1e6) / n).toFixed(1)
          const busy = (after.gateway - before.gateway) / c.durationS
          console.log(
            `    closed loop at ${CONNECTIONS} connections: ${c.rps.toFixed(0)} req/s, the gateway's core ${(busy * 100).toFixed(0)} % busy; a request: Redis commands ${((c1 - c0) / n).toFixed(3)}, script calls ${((s1 - s0) / n).toFixed(3)}` +
              (setup === 'cluster' ? `, Redis CPU ${us('redis')} µs, PostgreSQL backends' CPU ${us('pg')} µs` : ''),
          )
          printThreads(closedThreads, n)
          console.log(`    ${rss(gw.pid)}`)
        }
      } finally {
        await gw.stop()
      }
    }
  }
} finally {
  await up.stop()
  await stores.close()
  redis.close()
  await pg.close()
}
process.exit(0)
