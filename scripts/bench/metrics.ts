// What counting a request for GET /metrics costs, on the request thread: the observer's whole
// part in one chat request (begin, one upstream call, the record: request, duration, tokens,
// cost priced as the recorder prices it), timed over a million requests against the same loop
// with no observer, median of seven rounds. Also: the price lookup alone (the recorder does the
// same once more), per_key labels, and rendering a scrape of a few hundred series.
//   bun scripts/bench/metrics.ts [--requests 1000000] [--rounds 7]
import { parseArgs } from 'node:util'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
import type { Sql } from '../../src/db/sql.ts'
import type { GenerationInput } from '../../src/generations/types.ts'
import type { ApiKey } from '../../src/http/context.ts'
import { GatewayMetrics } from '../../src/metrics/gateway.ts'
import type { RequestContext } from '../../src/pipeline/context.ts'
import { NO_WATCH, type GenerationObserver } from '../../src/pipeline/observe.ts'
import { MemoryHealth } from '../../src/routing/health.ts'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '7' } } })
const N = Number(values.requests)
const ROUNDS = Number(values.rounds)

const yaml = (perKey: boolean) => ({ SWITCHYARD_METRICS_PER_KEY: String(perKey), OPENAI_API_KEY: 'sk-bench', ANTHROPIC_API_KEY: 'sk-bench' })
const noDb: Sql = { dialect: 'sqlite', all: async () => [], get: async () => null, run: async () => 0, tx: (fn) => fn(noDb) }
const key: ApiKey = { id: 'key_bench', account: 'acme', name: 'bench', keyPrefix: 'sk-sy-', status: 'active', credits: null, spent: 0, rpm: null, createdAt: 0, lastUsedAt: null }

function rig(perKey: boolean) {
  const config = loadConfig({ flags: { port: '0', 'data-dir': '/tmp/switchyard-bench-metrics' }, env: yaml(perKey) })
  const catalog = buildCatalog(config)
  const metrics = new GatewayMetrics({ config, catalog, health: new MemoryHealth(), sql: noDb })
  const model = catalog.resolve('gpt-4o-mini')!
  const rc = { apiKey: key, requestId: 'r', signal: new AbortController().signal } as RequestContext
  const record: GenerationInput = {
    id: 'chatcmpl-1',
    apiKey: key,
    endpoint: 'openai.chat.completions',
    stream: false,
    model,
    createdAt: Date.now(),
    usage: { inputTokens: 812, outputTokens: 230, cacheReadTokens: 1024, cacheWriteTokens: 0, reasoningTokens: 64 },
    finishReason: 'stop',
    latencyMs: 640,
    ttftMs: null,
    httpStatus: 200,
    provider: 'openai',
    attempts: [{ provider: 'openai', status: 200, ms: 310 }],
  }
  return { metrics, catalog, model, rc, record }
}

/** ns per request of `n` requests through `observer` (or none). */
function run(observer: GenerationObserver | undefined, r: ReturnType<typeof rig>, n: number): number {
  const start = { surface: 'chat' as const, model: r.model, stream: false, rc: r.rc }
  const call = { provider: 'openai', model: r.model }
  const t0 = Bun.nanoseconds()
  for (let i = 0; i < n; i++) {
    const watch = observer?.begin(start) ?? NO_WATCH
    watch.attempt(call).end(200)
    watch.end(r.record)
  }
  return (Bun.nanoseconds() - t0) / n
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Each variant once a round, in turn (so a busy moment of the machine spreads over all of them), after one round to warm up. */
function measure(variants: [string, () => number][]) {
  const xs = variants.map(() => [] as number[])
  for (let round = 0; round <= ROUNDS; round++) variants.forEach(([, f], i) => (round === 0 ? f() : xs[i]!.push(f())))
  return variants.map(([label], i) => ({ label, ns: median(xs[i]!) }))
}

const plain = rig(false)
const keyed = rig(true)
const rows = measure([
  ['no observer (the loop itself)', () => run(undefined, plain, N)],
  ['metrics', () => run(plain.metrics.observer, plain, N)],
  ['metrics, per_key', () => run(keyed.metrics.observer, keyed, N)],
  [
    'the price lookup alone',
    () => {
      const t0 = Bun.nanoseconds()
      for (let i = 0; i < N; i++) plain.catalog.cost(plain.model, plain.record.usage, new Date(plain.record.createdAt))
      return (Bun.nanoseconds() - t0) / N
    },
  ],
])
const base = rows[0]!.ns
console.log(`${N.toLocaleString('en')} requests a round, median of ${ROUNDS} rounds (Bun ${Bun.version})`)
for (const r of rows) console.log(`${r.label.padEnd(34)} ${r.ns.toFixed(0).padStart(5)} ns a request${r === rows[0] || r.label.startsWith('the price') ? '' : `  (counting: ${(r.ns - base).toFixed(0)} ns)`}`)

// a scrape: every model of the catalog on two surfaces and two statuses, a few providers
const m = plain.metrics
for (const model of plain.catalog.list())
  for (const surface of ['chat', 'responses'] as const)
    for (const status of [200, 429]) {
      const w = m.observer.begin({ surface, model, stream: false, rc: plain.rc })
      w.attempt({ provider: 'openai', model }).end(status)
      w.end({ ...plain.record, model, httpStatus: status })
    }
const text = await m.scrape('prometheus')
const scrapes = 200
const t0 = Bun.nanoseconds()
for (let i = 0; i < scrapes; i++) await m.scrape(i % 2 ? 'prometheus' : 'openmetrics')
const lines = text.split('\n').filter((l) => l && !l.startsWith('#')).length
console.log(`a scrape of ${lines.toLocaleString('en')} samples (${(text.length / 1024).toFixed(0)} KiB): ${((Bun.nanoseconds() - t0) / scrapes / 1e6).toFixed(2)} ms`)
plain.metrics.close()
keyed.metrics.close()
