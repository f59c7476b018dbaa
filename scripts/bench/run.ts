// `npm run bench`: fake upstream, gateway and bare-proxy subprocesses, then every phase
// measured directly against the upstream, through the gateway and through the bare proxy on
// the same client surface (the targets are ratios to it), then the memory phases.
// Flags: --quick (short phases, nothing written), --render (rewrite docs/bench.md from
// results.json, no run), --profile (the gateway writes a CPU profile to
// $TMPDIR/switchyard-bench-profile; summarise it with scripts/bench/profile-summary.ts),
// --only 'pass-through,messages pass-through' (just those paths: quick A/B runs),
// --no-memory (skip the memory phases), --rounds N (closed loop: gateway and bare proxy
// alternate N rounds, medians kept; default 3, 1 with --quick), --no-cluster (skip the last
// phase, cluster.ts: embedded against PostgreSQL + Redis; it runs when --only is not given),
// --no-records (skip the records phase, records-scale.ts: 10 million records in each store,
// about half an hour; it runs after the cluster phase when --only is not given),
// --no-long-streams (skip the long-stream phase, long-streams.ts: 1,000 and 5,000 concurrent
// 20 s streams on each path through the gateway, the bare proxy and direct; about 15 minutes).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chatCall, probe } from './call.ts'
import { closedLoop, WRK_MISSING, wrkPath, type ClosedLoopResult } from './closedloop.ts'
import { clusterPhase, writeCluster } from './cluster.ts'
import { longStreams } from './long-streams.ts'
import { writeLongStreams } from './long-streams-report.ts'
import { openLoop } from './openloop.ts'
import { machine, memory, metered } from './proc.ts'
import { pinSelf, ROOT, spawnBareProxy, spawnGateway, spawnUpstream, type Child } from './processes.ts'
import type { BatchBench } from './batch-report.ts'
import { memoryPhases } from './memory-phases.ts'
import { candidatePaths, fallbackPath, PASS_MODEL, route, selected, workingPaths, type Path } from './paths.ts'
import { markdownReport, textReport } from './report.ts'
import type { GatewayCost, Results } from './results.ts'
import { keepSections } from './sections.ts'
import { added, medianBy } from './stats.ts'
import { streamLoad } from './streams.ts'

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean' }, profile: { type: 'boolean' }, render: { type: 'boolean' }, only: { type: 'string' }, 'no-memory': { type: 'boolean' }, 'no-cluster': { type: 'boolean' }, 'no-records': { type: 'boolean' }, 'no-long-streams': { type: 'boolean' }, rounds: { type: 'string' } },
})

const PHASES = flags.quick
  ? { rates: [200, 1000], lowMs: 2000, highMs: 3000, wrkS: 2, streamRate: 100, streamMs: 2000, warmS: 1 }
  : { rates: [200, 1000], lowMs: 6000, highMs: 10_000, wrkS: 5, streamRate: 100, streamMs: 5000, warmS: 2 }
const CONNECTIONS = 64
// the memory phases: 60 s closed loop, 4,000 stream disconnects 200 at a time
const MEMORY = flags.quick ? { closedLoopS: 10, disconnects: 1000 } : { closedLoopS: 60, disconnects: 4000 }
const DISCONNECT_CONCURRENCY = 200
// closed loop: gateway and bare proxy in alternating rounds (median kept); the bare figure moved
// by a third between two quiet full runs, and a ratio inherits that
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 1 : 3))

const log = (msg: string) => process.stderr.write(`· ${msg}\n`)

const NOISY_CORES = 0.1

/** Run a phase, metering `gateway` (or the bare proxy, for its own phases) against everything else. */
const costedLoop = (measured: Child, others: Child[], work: () => Promise<ClosedLoopResult>) => costed(measured, others, work)

async function costed<T extends { ok?: number; requests?: number; loadCpuS?: number }>(gateway: Child, others: Child[], work: () => Promise<T>): Promise<{ result: T; cost: GatewayCost }> {
  const m = await metered({ gateway: gateway.pid, others: others.map((c) => c.pid) }, work, (r) => r.loadCpuS ?? 0)
  const n = m.result.ok ?? m.result.requests ?? 0
  if (m.otherCores > NOISY_CORES) log(`  noisy: other processes used ${(m.otherCores * 100).toFixed(0)}% of a core during this phase`)
  return {
    result: m.result,
    cost: { cpuMsPerRequest: n > 0 ? (m.gatewayCpuS * 1000) / n : NaN, coreBusy: m.gatewayCpuS / m.wallS, rssMiB: memory(gateway.pid).rssMiB, otherCores: m.otherCores },
  }
}

async function main() {
  // the machine's cores, not this process's affinity: a shell pinned to one core must not
  // quietly put the gateway on the load core (the children are pinned explicitly anyway)
  const cores = cpus().length
  const [loadCore, gatewayCore] = cores >= 2 ? [0, 1] : [0, 0]
  const notes: string[] = []
  if (cores < 2) notes.push('one CPU only: gateway, upstream and load share it; the figures are not comparable to the targets')
  if (!pinSelf(loadCore)) notes.push('could not pin the load driver (taskset failed)')
  const tool = wrkPath() ? 'wrk' : 'bun'
  if (tool === 'bun') {
    console.log(WRK_MISSING)
    notes.push(WRK_MISSING)
  }
  if (flags.quick) notes.push('quick run: short phases, rough figures')
  if (flags.only) notes.push(`--only ${flags.only}: the other paths not measured`)
  if (flags['no-memory']) notes.push('--no-memory: the memory phases not run')

  // a misspelt --only name fails here, before any process starts
  selected(candidatePaths('http://gateway', 'http://upstream', '', 'http://bare'), flags.only)
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const profileDir = flags.profile ? join(tmpdir(), 'switchyard-bench-profile') : undefined
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  // every child started so far is stopped on the way out, even when a later one fails to start
  const children: Child[] = []
  const started = async (c: Promise<Child>) => {
    const child = await c
    children.push(child)
    return child
  }
  const stopAll = () => Promise.all(children.reverse().map((c) => c.stop()))
  let upstream: Child, gateway: Child, bare: Child
  const startGateway = () => started(spawnGateway({ core: gatewayCore, upstream: upstream.url, key, profileDir }))
  try {
    upstream = await started(spawnUpstream(loadCore))
    gateway = await startGateway()
    bare = await started(spawnBareProxy(gatewayCore, upstream.url))
  } catch (e) {
    await stopAll()
    throw e
  }
  log(`upstream ${upstream.url} (core ${loadCore}), gateway ${gateway.url} (core ${gatewayCore}, pid ${gateway.pid}), bare proxy ${bare.url}`)

  try {
    const idleRssMiB = memory(gateway.pid).rssMiB
    let paths = await workingPaths(selected(candidatePaths(gateway.url, upstream.url, key, bare.url), flags.only), notes)
    if (paths.length === 0) {
      notes.push('no generation route answered: measured GET /api/v1/models (auth, rate limit, routing) instead')
      paths = await workingPaths([fallbackPath(gateway.url, upstream.url, key)], notes)
    }
    if (paths.length === 0) throw new Error(`nothing to measure:\n${notes.join('\n')}`)

    for (const p of paths) {
      log(`warm-up ${p.name}`)
      await closedLoop(p.baseline, { connections: 16, durationS: PHASES.warmS, core: loadCore })
      await closedLoop(p.gateway, { connections: 16, durationS: PHASES.warmS, core: loadCore })
      if (p.stream) await streamLoad(p.stream.gateway, PHASES.streamRate, 500)
      if (p.reference) {
        await closedLoop(p.reference.call, { connections: 16, durationS: PHASES.warmS, core: loadCore })
        await streamLoad(p.reference.stream, PHASES.streamRate, 500)
      }
    }

    const results: Results = {
      date: new Date().toISOString(),
      machine: machine(),
      setup: { gatewayCore, loadCore, closedLoopTool: tool, loadAvg: readFileSync('/proc/loadavg', 'utf8').trim(), notes },
      paths: Object.fromEntries(paths.map((p) => [p.name, { gateway: route(p.gateway), baseline: `${p.baseline.method} upstream ${new URL(p.baseline.url).pathname}`, reference: p.reference && `bare proxy ${route(p.reference.call)}` }])),
      openLoop: [],
      closedLoop: [],
      streams: [],
      memory: { idleRssMiB, finalRssMiB: NaN, peakRssMiB: NaN },
    }

    /** The same work direct, through the gateway and (when given) through the bare proxy, back to back, each metered. */
    const compare = async <T extends { ok?: number; requests?: number; loadCpuS?: number }>(direct: () => Promise<T>, through: () => Promise<T>, bareProxy?: () => Promise<T>) => {
      const b = await costed(gateway, [upstream, bare], direct)
      const g = await costed(gateway, [upstream, bare], through)
      // the bare proxy's own CPU while it carries the load: the floor of the idle-cost ratio
      const r = bareProxy ? await costed(bare, [upstream, gateway], bareProxy) : undefined
      return { baseline: b.result, gateway: g.result, reference: r?.result, cost: g.cost, referenceCost: r?.cost, otherCores: Math.max(b.cost.otherCores, g.cost.otherCores, r?.cost.otherCores ?? 0) }
    }
    const also = (what: string, p: Path) => (p.reference ? `${what}, then through the bare proxy` : what)

    for (const rate of PHASES.rates) {
      const ms = rate >= 1000 ? PHASES.highMs : PHASES.lowMs
      for (const p of paths) {
        log(`open loop ${p.name} at ${rate}/s for ${ms / 1000} s, ${also('direct then through the gateway', p)}`)
        const ref = p.reference
        const c = await compare(() => openLoop(p.baseline, rate, ms), () => openLoop(p.gateway, rate, ms), ref && (() => openLoop(ref.call, rate, ms)))
        results.openLoop.push({ path: p.name, rate, ...c, added: added(c.gateway.latency, c.baseline.latency), referenceAdded: c.reference && added(c.reference.latency, c.baseline.latency) })
      }
    }

    for (const p of paths) {
      const rounds = ROUNDS
      log(`closed loop ${p.name}, ${CONNECTIONS} connections, ${PHASES.wrkS} s each (${also(tool, p)}${rounds > 1 ? `; gateway and bare proxy alternate ${rounds} rounds, medians kept` : ''})`)
      const opts = { connections: CONNECTIONS, durationS: PHASES.wrkS, core: loadCore }
      const ref = p.reference
      // the ratio's two figures taken in turn, so a drift of the machine weighs on both alike
      const direct = await costed(gateway, [upstream, bare], () => closedLoop(p.baseline, opts))
      const gw: Awaited<ReturnType<typeof costedLoop>>[] = []
      const br: typeof gw = []
      for (let i = 0; i < rounds; i++) {
        gw.push(await costedLoop(gateway, [upstream, bare], () => closedLoop(p.gateway, opts)))
        if (ref) br.push(await costedLoop(bare, [upstream, gateway], () => closedLoop(ref.call, opts)))
      }
      const g = medianBy(gw, (m) => m.result.rps)!
      const r = medianBy(br, (m) => m.result.rps)
      results.closedLoop.push({
        path: p.name,
        baseline: direct.result,
        gateway: g.result,
        reference: r?.result,
        cost: g.cost,
        referenceCost: r?.cost,
        otherCores: Math.max(direct.cost.otherCores, ...gw.map((m) => m.cost.otherCores), ...br.map((m) => m.cost.otherCores)),
        ...(rounds > 1 ? { rounds: { gateway: gw.map((m) => m.result.rps), reference: br.map((m) => m.result.rps) } } : {}),
      })
    }

    for (const p of paths) {
      const s = p.stream
      if (!s) continue
      log(`streams ${p.name} at ${PHASES.streamRate}/s for ${PHASES.streamMs / 1000} s`)
      const ref = p.reference
      const c = await compare(
        () => streamLoad(s.baseline, PHASES.streamRate, PHASES.streamMs),
        () => streamLoad(s.gateway, PHASES.streamRate, PHASES.streamMs),
        ref && (() => streamLoad(ref.stream, PHASES.streamRate, PHASES.streamMs)),
      )
      results.streams.push({
        path: p.name,
        ...c,
        added: { ttfb: added(c.gateway.ttfb, c.baseline.ttfb), chunkDelay: added(c.gateway.chunkDelay, c.baseline.chunkDelay) },
        referenceAdded: c.reference && { ttfb: added(c.reference.ttfb, c.baseline.ttfb), chunkDelay: added(c.reference.chunkDelay, c.baseline.chunkDelay) },
      })
    }

    // the run's overall peak: every VmHWM reading before a memory phase resets it, and the last
    let priorLogLines = 0
    let overallPeak = 0
    const sawPeak = (mib: number) => void (overallPeak = Math.max(overallPeak, mib))
    if (!flags['no-memory']) {
      const passStreams = new Set(['pass-through', 'messages pass-through', 'responses pass-through'])
      const m = await memoryPhases(
        {
          gateway,
          async fresh() {
            sawPeak(memory(gateway.pid).hwmMiB)
            priorLogLines += gateway.outputLines?.() ?? 0
            await gateway.stop()
            children.splice(children.indexOf(gateway), 1)
            gateway = await startGateway()
            const warm = chatCall('gpt via chat', gateway.url + '/api/alpha/v1', key, PASS_MODEL)
            await probe(warm)
            await closedLoop(warm, { connections: 16, durationS: PHASES.warmS, core: loadCore })
            return gateway
          },
          chat: (url) => chatCall('gpt via chat', url + '/api/alpha/v1', key, PASS_MODEL),
          streams: (url) => candidatePaths(url, upstream.url, key, bare.url).flatMap((p) => (passStreams.has(p.name) && p.stream ? [p.stream.gateway] : [])),
          sawPeak,
          log,
        },
        { ...MEMORY, concurrency: DISCONNECT_CONCURRENCY, connections: CONNECTIONS, loadCore },
      )
      gateway = m.gateway
      results.memory.phases = m.phases
    }

    const mem = memory(gateway.pid)
    sawPeak(mem.hwmMiB)
    results.memory.finalRssMiB = mem.rssMiB
    // the targets hold with the access log on; this says it was (one line a request)
    const logLines = priorLogLines + (gateway.outputLines?.() ?? 0)
    notes.push(`gateway at --log-level info: ${logLines.toLocaleString('en-US')} lines of access log on its stdout, drained and dropped`)
    results.memory.peakRssMiB = overallPeak

    console.log('\n' + textReport(results, batchResults()))
    if (!flags.quick) {
      write(results)
      console.log('\nwrote scripts/bench/results.json and docs/bench.md')
    }
  } finally {
    await stopAll()
    if (profileDir) console.log(`gateway CPU profile written to ${profileDir}`)
  }

  // thousands of long streams open at once, each target a fresh process (long-streams.ts)
  if (!flags['no-long-streams']) {
    const counts = flags.quick ? [200] : [1000, 5000]
    log(`long-stream phase: ${counts.join(' and ')} concurrent streams (scripts/bench/long-streams.ts)`)
    const ls = await longStreams({ counts, chunks: flags.quick ? 100 : 400, gapMs: 50, only: flags.only, log, onCount: flags.quick ? undefined : writeLongStreams })
    if (!flags.quick) {
      writeLongStreams(ls)
      console.log('wrote scripts/bench/long-streams-results.json and the Long streams section of docs/bench.md')
    }
  }

  // last, with the gateway core free again: what cluster mode costs the chat pass-through
  if (!flags['no-cluster'] && !flags.only) {
    log('cluster phase: embedded against PostgreSQL + Redis (scripts/bench/cluster.ts)')
    const c = await clusterPhase({ quick: flags.quick, rounds: flags.rounds ? ROUNDS : undefined, log })
    if (c && !flags.quick) {
      writeCluster(c)
      console.log('wrote scripts/bench/cluster-results.json and the Cluster mode figures in docs/bench.md')
    }
  }

  // the records at scale, in a process of its own: it seeds 10 million records in each store
  if (!flags['no-records'] && !flags.only) {
    log('records phase: 10 million records in SQLite and in PostgreSQL (scripts/bench/records-scale.ts)')
    const quick = flags.quick ? ['--records', '100000', '--seconds', '2', '--rounds', '1', '--calls', '200', '--no-write'] : []
    await Bun.spawn([process.execPath, join(import.meta.dir, 'records-scale.ts'), ...quick], { stdout: 'inherit', stderr: 'inherit' }).exited
  }
}

const RESULTS = join(import.meta.dir, 'results.json')
const BATCH_RESULTS = join(import.meta.dir, 'batch-results.json')
const DOC = join(ROOT, 'docs', 'bench.md')

/** The batch bench's last saved figures (batch.ts), for its rows of the issue-12 table. */
const batchResults = (): BatchBench | undefined => (existsSync(BATCH_RESULTS) ? (JSON.parse(readFileSync(BATCH_RESULTS, 'utf8')) as BatchBench) : undefined)

/** The report, with the hand-written budget and the batch bench's section kept as they were. */
const withKeptSections = (markdown: string) => keepSections(markdown, existsSync(DOC) ? readFileSync(DOC, 'utf8') : undefined)

function write(results: Results) {
  writeFileSync(RESULTS, JSON.stringify(results, (_, v) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2) + '\n')
  mkdirSync(join(ROOT, 'docs'), { recursive: true })
  writeFileSync(DOC, withKeptSections(markdownReport(results, batchResults())))
}

if (flags.render) {
  const results = JSON.parse(readFileSync(RESULTS, 'utf8')) as Results
  writeFileSync(DOC, withKeptSections(markdownReport(results, batchResults())))
  console.log(textReport(results, batchResults()) + '\n\nwrote docs/bench.md from scripts/bench/results.json')
  process.exit(0)
}

await main().catch((e) => {
  console.error(e instanceof Error ? e.message : e)
  process.exit(1)
})
