// Tracing bench: what exporting every request's spans costs on the chat pass-through path.
// The bench upstream and a collector sink (this process: it accepts OTLP/HTTP and keeps the
// bodies, decoded only after a phase) on the load core; the gateway (access log on) pinned to
// the other core, started twice per round — without OTEL_* variables, and with
// OTEL_EXPORTER_OTLP_ENDPOINT at the sink, OTEL_TRACES_SAMPLER=always_on (protobuf, the SDK's
// defaults otherwise) — measured alternately, medians of the rounds kept:
//   · 1,000 req/s open loop: the gateway's CPU per request and the latency p50/p99;
//   · closed loop at 64 connections (wrk, else a Bun driver): req/s and CPU per request.
// The sink counts the spans it got: two per request (the server span and its call's) when
// nothing was dropped (wrk may end with a few requests unanswered, which the count includes).
//
//   bun scripts/bench/tracing.ts [--rounds 3] [--quick]
//
// Writes scripts/bench/tracing-results.json (not with --quick).
import { writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { decodeProtobuf } from '../../test/helpers/otlp-receiver.ts'
import { chatCall, probe } from './call.ts'
import { closedLoop, WRK_MISSING, wrkPath } from './closedloop.ts'
import { openLoop } from './openloop.ts'
import { machine, metered, threadCpuSeconds } from './proc.ts'
import { pinSelf, spawnGateway, spawnUpstream, type Child } from './processes.ts'
import { PASS_MODEL } from './paths.ts'
import { round } from './stats.ts'

const { values: flags } = parseArgs({ options: { rounds: { type: 'string' }, quick: { type: 'boolean' } } })
const ROUNDS = Number(flags.rounds ?? (flags.quick ? 1 : 3))
const PHASE = flags.quick ? { rate: 1000, openMs: 3000, closedS: 3, warmS: 1 } : { rate: 1000, openMs: 8000, closedS: 8, warmS: 2 }
const CONNECTIONS = 64
const RESULTS = join(import.meta.dir, 'tracing-results.json')

const log = (msg: string) => process.stderr.write(`· ${msg}\n`)

/** An OTLP/HTTP collector that answers at once and decodes later. */
function startSink() {
  let bodies: Uint8Array[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      bodies.push(new Uint8Array(await req.arrayBuffer()))
      return new Response(new Uint8Array(), { headers: { 'content-type': 'application/x-protobuf' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    /** Spans received since the last call (decoding them now, outside any measured phase). */
    take(): number {
      const n = bodies.reduce((sum, b) => sum + decodeProtobuf(b).length, 0)
      bodies = []
      return n
    },
    stop: () => server.stop(true),
  }
}

interface Figures {
  /** Gateway CPU ms a request at 1,000 req/s: the whole process, and its request thread alone. */
  cpuMsAtRate: number
  requestThreadCpuMsAtRate: number
  p50Ms: number
  p99Ms: number
  /** Closed loop. */
  rps: number
  cpuMsAtSaturation: number
  requestThreadCpuMsAtSaturation: number
  requests: number
  spans: number
  /** Spans the sink got per request sent: 2 when none was dropped. */
  spansPerRequest: number
  /** Cores' worth of CPU other processes used during the phases (noise). */
  otherCores: number
}

type Variant = 'off' | 'on'

async function measure(variant: Variant, upstream: Child, sink: ReturnType<typeof startSink>, cores: [number, number], key: string): Promise<Figures> {
  const env: Record<string, string> = variant === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'switchyard-bench' } : {}
  const gw = await spawnGateway({ core: cores[1], upstream: upstream.url, key, env })
  try {
    const call = chatCall('chat pass-through', `${gw.url}/api/alpha/v1`, key, PASS_MODEL)
    await probe(call)
    const warm = await closedLoop(call, { connections: CONNECTIONS, durationS: PHASE.warmS, core: cores[0] })
    const mainBefore = mainThreadCpu(gw.pid)
    const open = await metered({ gateway: gw.pid, others: [upstream.pid] }, () => openLoop(call, PHASE.rate, PHASE.openMs))
    const mainCpuS = mainThreadCpu(gw.pid) - mainBefore
    const mainMid = mainThreadCpu(gw.pid)
    const closed = await metered({ gateway: gw.pid, others: [upstream.pid] }, () => closedLoop(call, { connections: CONNECTIONS, durationS: PHASE.closedS, core: cores[0] }), (r) => r.loadCpuS)
    const mainClosedS = mainThreadCpu(gw.pid) - mainMid
    // what the gateway still holds goes out at its shutdown (the SDK's schedule: every 5 s)
    await gw.stop()
    // every request's spans, the warm-up's and the probe's included
    const requests = 1 + warm.requests + open.result.ok + closed.result.requests
    const spans = sink.take()
    return {
      cpuMsAtRate: (open.gatewayCpuS * 1000) / open.result.ok,
      requestThreadCpuMsAtRate: (mainCpuS * 1000) / open.result.ok,
      p50Ms: open.result.latency.p50,
      p99Ms: open.result.latency.p99,
      rps: closed.result.rps,
      cpuMsAtSaturation: (closed.gatewayCpuS * 1000) / closed.result.requests,
      requestThreadCpuMsAtSaturation: (mainClosedS * 1000) / closed.result.requests,
      requests,
      spans,
      spansPerRequest: spans / requests,
      otherCores: Math.max(open.otherCores, closed.otherCores),
    }
  } finally {
    await gw.stop()
  }
}

/** The request thread's CPU seconds (its tid is the process id). */
const mainThreadCpu = (pid: number) => Object.entries(threadCpuSeconds(pid)).find(([k]) => k.startsWith(`${pid}:`))?.[1] ?? 0

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

function medians(rows: Figures[]): Figures {
  const keys = Object.keys(rows[0]!) as (keyof Figures)[]
  return Object.fromEntries(keys.map((k) => [k, median(rows.map((r) => r[k]))])) as unknown as Figures
}

async function main() {
  const n = cpus().length
  const cores: [number, number] = n >= 2 ? [0, 1] : [0, 0]
  if (!pinSelf(cores[0])) log('could not pin the load driver (taskset failed)')
  if (!wrkPath()) log(WRK_MISSING)
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const upstream = await spawnUpstream(cores[0])
  const sink = startSink()
  const rows: Record<Variant, Figures[]> = { off: [], on: [] }
  try {
    for (let r = 1; r <= ROUNDS; r++) {
      for (const v of ['off', 'on'] as const) {
        const f = await measure(v, upstream, sink, cores, key)
        rows[v].push(f)
        if (f.otherCores > 0.1) log(`  noisy: other processes used ${(f.otherCores * 100).toFixed(0)}% of a core`)
        log(`round ${r}, tracing ${v}: ${f.cpuMsAtRate.toFixed(4)} ms CPU/request at ${PHASE.rate} req/s (request thread ${f.requestThreadCpuMsAtRate.toFixed(4)}; p50 ${f.p50Ms.toFixed(2)}, p99 ${f.p99Ms.toFixed(2)} ms); ${Math.round(f.rps)} req/s at ${CONNECTIONS} connections, ${f.cpuMsAtSaturation.toFixed(4)} ms CPU/request (request thread ${f.requestThreadCpuMsAtSaturation.toFixed(4)}); ${f.spans} spans for ${f.requests} requests`)
      }
    }
  } finally {
    await upstream.stop()
    sink.stop()
  }
  const off = medians(rows.off)
  const on = medians(rows.on)
  const us = (ms: number) => round(ms * 1000, 1)
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    tool: wrkPath() ? 'wrk' : 'bun',
    rounds: ROUNDS,
    phases: PHASE,
    path: `POST /api/alpha/v1/chat/completions model ${PASS_MODEL} (pass-through, JSON)`,
    off,
    on,
    cost: {
      cpuUsPerRequestAtRate: us(on.cpuMsAtRate - off.cpuMsAtRate),
      requestThreadCpuUsPerRequestAtRate: us(on.requestThreadCpuMsAtRate - off.requestThreadCpuMsAtRate),
      cpuUsPerRequestAtSaturation: us(on.cpuMsAtSaturation - off.cpuMsAtSaturation),
      requestThreadCpuUsPerRequestAtSaturation: us(on.requestThreadCpuMsAtSaturation - off.requestThreadCpuMsAtSaturation),
      p50AddedMs: round(on.p50Ms - off.p50Ms, 3),
      p99AddedMs: round(on.p99Ms - off.p99Ms, 3),
      throughputRatio: round(on.rps / off.rps, 3),
      spansPerRequest: round(on.spansPerRequest, 3),
    },
  }
  console.log(JSON.stringify(result.cost, null, 2))
  console.log(`tracing off: ${us(off.cpuMsAtRate)} µs CPU/request at ${PHASE.rate} req/s, ${Math.round(off.rps)} req/s max; on: ${us(on.cpuMsAtRate)} µs, ${Math.round(on.rps)} req/s`)
  if (!flags.quick) writeFileSync(RESULTS, JSON.stringify(result, null, 2) + '\n')
}

await main()
