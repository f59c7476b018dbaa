// Usage report speed: seeds N generation records (default 1,000,000) spread over the last 30
// days into a temp data dir through the recorder's own write path (cost, spend, hourly
// rollup), starts the real server, and times GET /api/v1/usage over HTTP (median of runs).
//   bun scripts/bench/usage.ts [--records 1000000] [--runs 31]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../../src/config/load.ts'
import { names } from '../../src/db/columns.ts'
import { generations, usageHourly } from '../../src/db/schema.ts'
import { createLogger } from '../../src/http/log.ts'
import { startServer } from '../../src/server.ts'
import type { GenerationInput } from '../../src/generations/types.ts'

const { values } = parseArgs({ options: { records: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '31' } } })
const RECORDS = Number(values.records)
const RUNS = Number(values.runs)
const DAY = 86_400_000
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-5-mini', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'o3', 'mock-gpt']

const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-usage-'))
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
const config = loadConfig({ flags: { port: '0', 'data-dir': dataDir }, env: { SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000', SWITCHYARD_IP_RPM: '1000000' }, cwd: dataDir })
const running = await startServer(config, createLogger('warn'))
const s = running.services

try {
  const apiKey = (await s.keys.authenticate(key))!
  // a second account in the same tables, so the report has to select its own
  const other = (await s.keys.create({ name: 'other', account: 'other' })).record
  const models = MODELS.map((m) => s.catalog.resolve(m)!)
  const now = Date.now()
  let seed = 42
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648)

  const t0 = performance.now()
  for (let i = 0; i < RECORDS; i++) {
    const input: GenerationInput = {
      id: `chatcmpl-bench-${i}`,
      apiKey: i % 10 === 9 ? other : apiKey,
      endpoint: 'openai.chat.completions',
      stream: i % 2 === 0,
      model: models[i % models.length]!,
      createdAt: now - Math.floor(rand() * 30 * DAY),
      usage: { inputTokens: 200 + (i % 1000), outputTokens: 50 + (i % 300), cacheReadTokens: i % 3 === 0 ? 512 : 0, cacheWriteTokens: 0 },
      finishReason: 'stop',
      latencyMs: 300,
      ttftMs: 80,
    }
    s.recorder.record(input)
  }
  await s.recorder.flush()
  const seedMs = performance.now() - t0
  const count = async (table: string) => (await s.storage.sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n
  const n = await count(names(generations).$table)
  const hours = await count(names(usageHourly).$table)
  console.log(`seeded ${n.toLocaleString('en')} records (${hours} rollup rows) in ${(seedMs / 1000).toFixed(1)} s through Recorder.record`)

  const time = async (label: string, qs: string) => {
    const url = `${running.url}/api/v1/usage?${qs}`
    const headers = { authorization: `Bearer ${key}` }
    let body: any
    for (let i = 0; i < 3; i++) body = await (await fetch(url, { headers })).json()
    const ms: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const a = performance.now()
      const r = await fetch(url, { headers })
      body = await r.json()
      if (r.status !== 200) throw new Error(`${label}: ${r.status} ${JSON.stringify(body)}`)
      ms.push(performance.now() - a)
    }
    ms.sort((a, b) => a - b)
    const med = ms[Math.floor(ms.length / 2)]!
    console.log(
      `${label.padEnd(34)} median ${med.toFixed(2)} ms  p90 ${ms[Math.floor(ms.length * 0.9)]!.toFixed(2)} ms  max ${ms.at(-1)!.toFixed(2)} ms  (${body.series.length} buckets, ${body.totals.total_requests.toLocaleString('en')} requests)`,
    )
    return med
  }
  console.log(`HTTP round trip, ${RUNS} runs each, after 3 warm-up calls:`)
  const main = await time('30d daily (timeframe=30d)', 'timeframe=30d')
  await time('30d hourly', 'timeframe=30d&granularity=hour')
  await time('7d daily', 'timeframe=7d')
  await time('24h hourly (default)', '')
  await time('30d daily, model filter', 'timeframe=30d&model=gpt-4o')
  const from = new Date(now - 20 * DAY + 1_234_567).toISOString()
  const to = new Date(now - 2 * DAY - 7_654_321).toISOString()
  await time('from/to with partial edge hours', `from=${from}&to=${to}`)
  console.log(`RESULT 30d daily report over ${RECORDS.toLocaleString('en')} records: median ${main.toFixed(2)} ms`)
} finally {
  await running.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
