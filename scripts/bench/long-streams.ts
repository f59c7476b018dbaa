// The long-stream phase: N concurrent streams of 20 s at 20 chunks a second (the shape of real
// LLM traffic), on each surface, pass-through and translated, through the gateway, through the
// bare Elysia proxy and straight to the fake upstream. Each target is a fresh process on the
// gateway's core with Bun's fetch limit (BUN_CONFIG_MAX_HTTP_REQUESTS) above N; the streams
// open over a short ramp, and once all are open (the plateau) the phase reads the target's CPU
// time against the chunks relayed meanwhile, and its RSS against the RSS it had idle.
//   bun scripts/bench/long-streams.ts [1000,5000] [--only 'pass-through,translated'] [--quick] [--no-write] [--render]
// Writes scripts/bench/long-streams-results.json and its figures in docs/bench.md (not with
// --quick, 5 s streams, nor --no-write, which prints the figures as JSON instead); --render
// redraws the figures from the saved results.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { Call } from './call.ts'
import { LeanClient, rawRequest, type LeanStream } from './lean-client.ts'
import { candidatePaths, selected, type Surface } from './paths.ts'
import { cpuSeconds, machine, memory } from './proc.ts'
import { pinSelf, spawnBareProxy, spawnGateway, spawnUpstream, type Child } from './processes.ts'
import { RESULTS, writeLongStreams, type LongStreamBench, type LongStreamRun } from './long-streams-report.ts'
import { summarize } from './stats.ts'

export interface LongStreamPlan {
  counts: number[]
  /** Chunks a stream and their gap: 400 × 50 ms is 20 s at 20 chunks a second. */
  chunks: number
  gapMs: number
  /** Path names (paths.ts) to measure; all when undefined. */
  only?: string
  log(msg: string): void
}

const LOAD_CORE = 0
const TARGET_CORE = 1
const WARM_STREAMS = 100
const TERMINATOR: Record<Surface, string> = { chat: 'data: [DONE]', messages: 'message_stop', responses: 'response.completed' }
const SURFACE_OF: Record<string, Surface> = {
  'pass-through': 'chat',
  translated: 'chat',
  'messages pass-through': 'messages',
  'messages translated': 'messages',
  'responses pass-through': 'responses',
  'responses translated': 'responses',
}
/** The wire each path's upstream speaks: the direct run its first byte is compared with. */
export const WIRE_OF: Record<string, Surface> = {
  'pass-through': 'chat',
  translated: 'messages',
  'messages pass-through': 'messages',
  'messages translated': 'chat',
  'responses pass-through': 'responses',
  'responses translated': 'messages',
}
const PASS = ['pass-through', 'messages pass-through', 'responses pass-through']

/** Busy CPU seconds of one core so far (/proc/stat's cpuN line). */
function coreBusySeconds(core: number): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith(`cpu${core} `))!
  const f = line.trim().split(/\s+/).slice(1).map(Number)
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) / 100
}

const selfCpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/** Ramp `n` streams of `call` open over `rampMs`; resolves with every stream once they end. */
function openMany(client: LeanClient, call: Call, terminator: string, n: number, rampMs: number, timeoutMs: number): Promise<LeanStream[]> {
  const req = rawRequest(call)
  const all: Promise<LeanStream>[] = []
  return new Promise((resolve) => {
    const t0 = performance.now()
    const step = () => {
      const due = Math.min(n, Math.ceil(((performance.now() - t0) / rampMs) * n))
      while (all.length < due) all.push(client.stream(call, req, terminator, timeoutMs))
      if (all.length < n) setTimeout(step, 5)
      else resolve(Promise.all(all))
    }
    step()
  })
}

/** A few short streams, then closed, so the target has compiled its hot paths before it is measured. */
async function warm(client: LeanClient, call: Call) {
  await Promise.all(Array.from({ length: WARM_STREAMS }, () => client.stream(call, rawRequest(call), '', 1500)))
}

/** One target (process `pid`, or none for the direct runs) carrying `n` streams of `call`. */
async function measure(client: LeanClient, label: { target: LongStreamRun['target']; path: string }, call: Call, pid: number | undefined, n: number, plan: LongStreamPlan): Promise<LongStreamRun> {
  const surface = SURFACE_OF[label.path]!
  await warm(client, call)
  await Bun.sleep(1500)
  const idleRssMiB = pid ? memory(pid).rssMiB : NaN
  const rampMs = Math.max(1000, n)
  const streamMs = plan.chunks * plan.gapMs
  const t0 = performance.now()
  const streams = openMany(client, call, TERMINATOR[surface], n, rampMs, streamMs + 30_000)
  // the plateau: every stream open, none yet near its end
  const from = rampMs + 1000
  const to = streamMs - 1500
  await Bun.sleep(Math.max(0, from - (performance.now() - t0)))
  const before = { cpu: pid ? cpuSeconds(pid) : 0, chunks: client.chunks, load: coreBusySeconds(LOAD_CORE), self: selfCpu(), t: performance.now() }
  const rss: number[] = []
  while (performance.now() - t0 < to) {
    if (pid) rss.push(memory(pid).rssMiB)
    await Bun.sleep(1000)
  }
  const windowS = (performance.now() - before.t) / 1000
  const cpuS = pid ? cpuSeconds(pid) - before.cpu : NaN
  const chunks = client.chunks - before.chunks
  const loadCore = (coreBusySeconds(LOAD_CORE) - before.load) / windowS
  const clientCores = (selfCpu() - before.self) / windowS
  const openAtEnd = client.open
  const done = await streams
  const errors: Record<string, number> = {}
  const fail = (k: string) => void (errors[k] = (errors[k] ?? 0) + 1)
  let ok = 0
  for (const s of done) {
    if (s.error) fail(s.error)
    else if (s.status !== 200) fail(`HTTP ${s.status}`)
    else if (s.chunks < plan.chunks) fail('short stream')
    else if (!s.ended) fail('no terminator')
    else ok++
  }
  // the figure is the median; the samples show whether the RSS held or climbed over the plateau
  if (pid) plan.log(`  ${label.target} ${label.path} ×${n}: RSS idle ${idleRssMiB.toFixed(0)} MiB, each second of the plateau ${rss.map((x) => x.toFixed(0)).join(' ')}`)
  const openRssMiB = rss.length ? summarize(rss).p50 : NaN
  const r: LongStreamRun = {
    ...label,
    surface,
    n,
    ok,
    errors,
    ttfb: summarize(done.filter((s) => !Number.isNaN(s.ttfb)).map((s) => s.ttfb)),
    windowS,
    openAtWindowEnd: openAtEnd,
    chunks,
    cpuS,
    usPerChunk: (cpuS * 1e6) / chunks,
    idleRssMiB,
    openRssMiB,
    kibPerStream: ((openRssMiB - idleRssMiB) * 1024) / n,
    loadCore,
    clientCores,
  }
  plan.log(`  ${label.target} ${label.path} ×${n}: ok ${ok}${Object.keys(errors).length ? ` errors ${JSON.stringify(errors)}` : ''}, first byte p50 ${r.ttfb.p50.toFixed(1)} ms p99 ${r.ttfb.p99.toFixed(1)} ms, ${Number.isFinite(r.usPerChunk) ? `${r.usPerChunk.toFixed(1)} µs/chunk, ` : ''}${pid ? `${r.kibPerStream.toFixed(1)} KiB/stream (RSS ${idleRssMiB.toFixed(0)} → ${openRssMiB.toFixed(0)} MiB), ` : ''}load core ${(loadCore * 100).toFixed(0)}% (client ${(clientCores * 100).toFixed(0)}%)`)
  return r
}

export async function longStreams(plan: LongStreamPlan & { onCount?: (partial: LongStreamBench) => void }): Promise<LongStreamBench> {
  pinSelf(LOAD_CORE)
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const paths = selected(candidatePaths('http://gw', 'http://up', key, 'http://bare'), plan.only).map((p) => p.name)
  const runs: LongStreamRun[] = []
  const loadAvg = readFileSync('/proc/loadavg', 'utf8').trim()
  const upstream = await spawnUpstream(LOAD_CORE, { UPSTREAM_STREAM_CHUNKS: String(plan.chunks), UPSTREAM_STREAM_GAP_MS: String(plan.gapMs) })
  const client = new LeanClient()
  const pathsAt = (url: string) => candidatePaths(url, upstream.url, key, url)
  const bench = (): LongStreamBench => ({ date: new Date().toISOString(), machine: machine(), setup: { chunks: plan.chunks, gapMs: plan.gapMs, loadAvg, loadAvgAfter: readFileSync('/proc/loadavg', 'utf8').trim(), targetCore: TARGET_CORE, loadCore: LOAD_CORE }, runs })
  try {
    for (const n of plan.counts) {
      if (n !== plan.counts[0]) plan.onCount?.(bench())
      const fetchLimit = { BUN_CONFIG_MAX_HTTP_REQUESTS: String(Math.min(65_535, n + 1024)) }
      // the direct runs: one per upstream wire the paths reach (a translated path shares its wire's)
      for (const wire of new Set(paths.map((name) => WIRE_OF[name]!))) {
        const name = PASS.find((x) => SURFACE_OF[x] === wire)!
        const base = pathsAt(upstream.url).find((x) => x.name === name)!.stream!.baseline
        plan.log(`long streams ×${n}: direct ${base.name}`)
        runs.push(await measure(client, { target: 'direct', path: name }, base, undefined, n, plan))
      }
      // the bare proxy: one run per client surface the paths use (it relays every surface as is)
      for (const surface of new Set(paths.map((name) => SURFACE_OF[name]!))) {
        const name = PASS.find((x) => SURFACE_OF[x] === surface)!
        const bare: Child = await spawnBareProxy(TARGET_CORE, upstream.url, fetchLimit)
        try {
          plan.log(`long streams ×${n}: bare proxy ${surface}`)
          runs.push(await measure(client, { target: 'bare', path: name }, pathsAt(bare.url).find((x) => x.name === name)!.reference!.stream, bare.pid, n, plan))
        } finally {
          await bare.stop()
        }
      }
      for (const name of paths) {
        const gw = await spawnGateway({ core: TARGET_CORE, upstream: upstream.url, key, env: fetchLimit })
        try {
          plan.log(`long streams ×${n}: gateway ${name}`)
          runs.push(await measure(client, { target: 'gateway', path: name }, pathsAt(gw.url).find((x) => x.name === name)!.stream!.gateway, gw.pid, n, plan))
        } finally {
          await gw.stop()
        }
      }
    }
  } finally {
    await upstream.stop()
  }
  return bench()
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean' }, 'no-write': { type: 'boolean' }, render: { type: 'boolean' } }, allowPositionals: true })
  if (values.render) {
    writeLongStreams(JSON.parse(readFileSync(RESULTS, 'utf8')) as LongStreamBench)
    console.log('wrote the Long streams figures of docs/bench.md from scripts/bench/long-streams-results.json')
    process.exit(0)
  }
  const counts = (positionals[0] ?? (values.quick ? '200' : '1000,5000')).split(',').map(Number)
  const write = !values.quick && !values['no-write']
  const bench = await longStreams({ counts, chunks: values.quick ? 100 : 400, gapMs: 50, only: values.only, log: (m) => process.stderr.write(`· ${m}\n`), onCount: write ? writeLongStreams : undefined })
  if (write) writeLongStreams(bench)
  else console.log(JSON.stringify(bench, null, 1))
  process.exit(0)
}
