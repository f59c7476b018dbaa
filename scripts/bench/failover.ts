// Failover bench: what a deployment failing before its first byte adds to a request.
// Two bench upstreams on the load core, one answering, one answering every request 500 at
// once; the gateway (access log on, pinned to the other core) serves two models on them:
//   direct-mini   → the answering upstream only
//   failover-mini → the failing upstream first (priority 1; failures_to_cool out of reach, so
//                   it never rests and every request fails over), then the answering one
// Requests go one at a time, alternating: the failing upstream straight from the client (one
// upstream round trip, the yardstick), direct-mini and failover-mini through the gateway.
// Each upstream answer is held UPSTREAM_DELAY_MS (--delays: 0 = the loopback's own round trip,
// then simulated network round trips). Added latency = failover-mini − direct-mini, p50 and
// p99 (differences of percentiles). The target: at most about one upstream round trip, read as
// added ≤ the round trip + 0.5 ms at p50 (+ 1 ms at p99) of gateway work.
//
//   bun scripts/bench/failover.ts [--requests 2000] [--delays 0,5,20] [--quick]
//
// Writes scripts/bench/failover-results.json (not with --quick).
import { rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chatCall, probe, send, type Call } from './call.ts'
import { machine } from './proc.ts'
import { pinSelf, spawnGateway, spawnUpstream, type Child } from './processes.ts'
import { round, summarize, type Summary } from './stats.ts'

const { values: flags } = parseArgs({ options: { requests: { type: 'string' }, delays: { type: 'string' }, quick: { type: 'boolean' } } })
const REQUESTS = Number(flags.requests ?? (flags.quick ? 300 : 2000))
const WARM = Math.min(200, REQUESTS)
const DELAYS = (flags.delays ?? (flags.quick ? '0,5' : '0,5,20')).split(',').map(Number)
const SLACK = { p50: 0.5, p99: 1 }
const RESULTS = join(import.meta.dir, 'failover-results.json')

const log = (msg: string) => process.stderr.write(`· ${msg}\n`)

const yaml = (ok: string, failing: string) => `
providers:
  - { id: ok, kind: openai, base_url: ${ok}/v1, api_key: sk-bench-ok, max_retries: 0 }
  - { id: failing, kind: openai, base_url: ${failing}/v1, api_key: sk-bench-failing, max_retries: 0 }
models:
  - { id: direct-mini, family: openai, deployments: [{ provider: ok, upstream_id: gpt-4o-mini }], price: { input_mtok: 0.15, output_mtok: 0.6 } }
  - id: failover-mini
    family: openai
    deployments: [{ provider: failing, priority: 1, upstream_id: gpt-4o-mini }, { provider: ok, priority: 2, upstream_id: gpt-4o-mini }]
    price: { input_mtok: 0.15, output_mtok: 0.6 }
routing: { failures_to_cool: 1000000000 }
`

/** One request's wall time (ms), its answer read; a wrong answer throws. */
async function timed(c: Call, status = 200): Promise<number> {
  const t0 = performance.now()
  const res = await send(c)
  const text = await res.text()
  const ms = performance.now() - t0
  if (res.status !== status) throw new Error(`${c.name}: ${res.status} ${text.slice(0, 300)}`)
  return ms
}

interface Row {
  delayMs: number
  requests: number
  roundTrip: Summary
  direct: Summary
  failover: Summary
  added: { p50: number; p99: number }
  met: { p50: boolean; p99: boolean }
}

async function measure(delayMs: number, cores: [number, number], key: string): Promise<Row> {
  const children: Child[] = []
  const dir = join(tmpdir(), `switchyard-bench-failover-${process.pid}-${delayMs}`)
  try {
    const delay = { UPSTREAM_DELAY_MS: String(delayMs) }
    const [ok, failing] = await Promise.all([spawnUpstream(cores[0], delay), spawnUpstream(cores[0], { ...delay, UPSTREAM_FAIL_STATUS: '500' })])
    children.push(ok, failing)
    const config = `${dir}.yaml`
    writeFileSync(config, yaml(ok.url, failing.url))
    const gw = await spawnGateway({ core: cores[1], upstream: ok.url, key, env: { SWITCHYARD_CONFIG: config } })
    children.push(gw)
    const base = `${gw.url}/api/alpha/v1`
    const direct = chatCall('direct-mini', base, key, 'direct-mini')
    const failover = chatCall('failover-mini', base, key, 'failover-mini')
    const upstream = chatCall('failing upstream', `${failing.url}/v1`, 'sk-bench-failing', 'gpt-4o-mini')
    await probe(direct)
    const first = await send(failover)
    if (first.status !== 200 || first.headers.get('x-switchyard-provider') !== 'ok') throw new Error(`failover-mini: ${first.status} from ${first.headers.get('x-switchyard-provider')}: ${await first.text()}`)
    await first.text()

    const samples = { roundTrip: [] as number[], direct: [] as number[], failover: [] as number[] }
    for (let i = 0; i < WARM + REQUESTS; i++) {
      // the order turns each time, so no figure always follows the same one
      const order = [() => timed(upstream, 500), () => timed(direct), () => timed(failover)]
      const keys = ['roundTrip', 'direct', 'failover'] as const
      for (let j = 0; j < 3; j++) {
        const k = (i + j) % 3
        const ms = await order[k]!()
        if (i >= WARM) samples[keys[k]!].push(ms)
      }
    }
    const [roundTrip, d, f] = [summarize(samples.roundTrip), summarize(samples.direct), summarize(samples.failover)]
    const added = { p50: f.p50 - d.p50, p99: f.p99 - d.p99 }
    return { delayMs, requests: REQUESTS, roundTrip, direct: d, failover: f, added, met: { p50: added.p50 <= roundTrip.p50 + SLACK.p50, p99: added.p99 <= roundTrip.p99 + SLACK.p99 } }
  } finally {
    for (const c of children.reverse()) await c.stop()
    rmSync(`${dir}.yaml`, { force: true })
  }
}

const ms = (v: number) => `${v.toFixed(2)} ms`

async function main() {
  const n = cpus().length
  const cores: [number, number] = n >= 2 ? [0, 1] : [0, 0]
  if (!pinSelf(cores[0])) log('could not pin the load driver (taskset failed)')
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const rows: Row[] = []
  for (const delay of DELAYS) {
    log(`upstream round trip held ${delay} ms: ${WARM} warm-up and ${REQUESTS} measured requests of each kind`)
    rows.push(await measure(delay, cores, key))
  }
  console.log('\n| upstream delay | one upstream round trip p50 / p99 | direct-mini p50 / p99 | failover-mini p50 / p99 | added by failover p50 / p99 | within one round trip |')
  console.log('|---|---|---|---|---|---|')
  for (const r of rows) {
    const verdict = r.met.p50 && r.met.p99 ? 'yes' : `no (${[!r.met.p50 && 'p50', !r.met.p99 && 'p99'].filter(Boolean).join(', ')})`
    console.log(`| ${r.delayMs} ms | ${ms(r.roundTrip.p50)} / ${ms(r.roundTrip.p99)} | ${ms(r.direct.p50)} / ${ms(r.direct.p99)} | ${ms(r.failover.p50)} / ${ms(r.failover.p99)} | +${ms(r.added.p50)} / +${ms(r.added.p99)} | ${verdict} |`)
  }
  if (flags.quick) return
  const out = { when: new Date().toISOString(), machine: machine(), slackMs: SLACK, rows }
  writeFileSync(RESULTS, JSON.stringify(out, (_, v) => (typeof v === 'number' && !Number.isInteger(v) ? round(v) : v), 2) + '\n')
  log(`wrote ${RESULTS}`)
}

await main()
