// The dashboard on a big data dir: seeds N generation records (default 1,000,000, over the last
// 29 days, 3 accounts, 6 keys, 8 models, 1 % failed) the way the recorder stores them (rows and
// hourly rollup), starts the gateway on it, and times the routes the page reads (median of a
// few calls each) and, when /usr/bin/chromium is there, the usage view drawn in the browser
// after a reload. Prints a Markdown table (docs/dashboard.md quotes a run).
//   bun scripts/dashboard-bench.ts [--records N] [--keep DIR]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { KeyStore } from '../src/auth/keys.ts'
import { loadConfig } from '../src/config/load.ts'
import { openStorage } from '../src/db/client.ts'
import { hourStart, type GenerationRow } from '../src/generations/row.ts'
import { GenerationStore } from '../src/generations/store.ts'
import { createLogger } from '../src/http/log.ts'
import { startServer } from '../src/server.ts'

const { values } = parseArgs({ options: { records: { type: 'string' }, keep: { type: 'string' } } })
const N = Number(values.records ?? 1_000_000)
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'switchyard-dash-bench-'))
const ADMIN = 'adm-bench'
const DAY = 86_400_000
const MODELS: [model: string, provider: string, share: number, usdPerCall: number | null][] = [
  ['gpt-4o-mini', 'openai', 0.35, 0.0004], ['gpt-4o', 'openai', 0.2, 0.006], ['claude-sonnet-4-5', 'anthropic', 0.2, 0.009], ['claude-haiku-4-5', 'anthropic', 0.1, 0.002],
  ['gpt-5', 'openai', 0.08, 0.01], ['mock-gpt', 'mock', 0.045, null], ['mock-claude', 'mock', 0.024, null], ['o3', 'openai', 0.001, 0.02],
]

// a small deterministic PRNG: the same data dir on every run
let seed = 42
const rand = () => ((seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647)
const pickModel = () => {
  let x = rand()
  for (const m of MODELS) if ((x -= m[2]) <= 0) return m
  return MODELS[0]!
}

const t0 = performance.now()
const storage = await openStorage({ dataDir: dir })
const keys = new KeyStore(storage)
const made: ({ account: string } & Awaited<ReturnType<KeyStore['create']>>)[] = []
for (const [i, account] of ['acme', 'acme', 'beta', 'beta', 'gamma', 'gamma'].entries()) made.push({ account, ...(await keys.create({ name: `k${i}`, account })) })
const store = new GenerationStore(storage)
const now = Date.now()
const CHUNK = 10_000
for (let done = 0; done < N; done += CHUNK) {
  const rows: GenerationRow[] = []
  for (let i = done; i < Math.min(N, done + CHUNK); i++) {
    const [model, provider, , usd] = pickModel()
    const k = made[Math.floor(rand() * made.length)]!
    const failed = rand() < 0.01
    const prompt = 200 + Math.floor(rand() * 2000)
    const completion = failed ? 0 : 20 + Math.floor(rand() * 600)
    rows.push({
      id: `gen-bench${String(i).padStart(9, '0')}`, replyId: `chatcmpl-bench-${i}`, apiKeyId: k.record.id, account: k.account,
      endpoint: model.includes('claude') ? 'anthropic.messages' : 'openai.chat.completions', stream: rand() < 0.5, model, provider,
      // spread evenly over the last 29 days, oldest first (as they would have been written)
      createdAt: Math.floor(now - 29 * DAY + (i / N) * 29 * DAY),
      promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion, cacheCreationInputTokens: 0, cacheReadInputTokens: 0,
      reasoningTokens: null, finishReason: failed ? null : 'stop', status: null, cost: usd, unpriced: usd === null,
      latencyMs: 150 + Math.floor(rand() * 3000), ttftMs: 80, error: failed ? 'upstream answered 500' : null, httpStatus: failed ? 500 : 200, batchId: null, deployment: null, attempts: null, usageCounted: false, cached: false, replayed: false, serviceTier: null, speed: null, inferenceGeo: null, usageExtras: null,
    })
  }
  await storage.sql.tx((q) => store.insertRows(rows, q))
}
const seeded = performance.now() - t0
await storage.close()
console.error(`seeded ${N} records in ${(seeded / 1000).toFixed(1)} s into ${dir}`)

const config = loadConfig({ flags: { port: '0', 'data-dir': dir }, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' }, cwd: dir })
const running = await startServer(config, createLogger('silent'))
const base = running.url
const key = made[0]!.key

async function time(path: string, token: string, runs = 5): Promise<{ ms: number; bytes: number }> {
  const ms: number[] = []
  let bytes = 0
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    const r = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } })
    const body = await r.arrayBuffer()
    ms.push(performance.now() - t)
    bytes = body.byteLength
    if (!r.ok) throw new Error(`${path}: ${r.status} ${new TextDecoder().decode(body)}`)
  }
  ms.sort((a, b) => a - b)
  return { ms: ms[Math.floor(ms.length / 2)]!, bytes }
}

const rows: [string, string, number, number][] = []
const cases: [string, string, string][] = [
  ['usage 24h hourly, by model, all accounts', '/api/v1/usage?timeframe=24h&breakdown=model', ADMIN],
  ['usage 7d daily, by model, all accounts', '/api/v1/usage?timeframe=7d&breakdown=model', ADMIN],
  ['usage 30d daily, by model, all accounts', '/api/v1/usage?timeframe=30d&breakdown=model', ADMIN],
  ['usage 30d hourly, by model, all accounts', '/api/v1/usage?timeframe=30d&granularity=hour&breakdown=model', ADMIN],
  ['usage 30d daily, by model, one key\'s account', '/api/v1/usage?timeframe=30d&breakdown=model', key],
  ['generations, newest 50, all keys', '/api/v1/generations?limit=50', ADMIN],
  ['generations, newest 50, one key', '/api/v1/generations?limit=50', key],
  ['generations, model=gpt-4o', '/api/v1/generations?limit=50&model=gpt-4o', ADMIN],
  ['generations, status=error (1 %)', '/api/v1/generations?limit=50&status=error', ADMIN],
  ['generations, model=o3 (0.1 %)', '/api/v1/generations?limit=50&model=o3', ADMIN],
  ['generations, model=o3 and status=error (0.001 %)', '/api/v1/generations?limit=50&model=o3&status=error', ADMIN],
  ['generations, page 100 (after=)', '', ADMIN],
  ['providers, last hour, all keys', '/api/v1/dashboard/providers', ADMIN],
  ['providers, last hour, one key', '/api/v1/dashboard/providers', key],
]
for (const [label, path, token] of cases) {
  let p = path
  if (label.startsWith('generations, page 100')) {
    // a cursor 5,000 records deep
    let after = ''
    for (let i = 0; i < 100; i++) after = ((await (await fetch(`${base}/api/v1/generations?limit=50${after ? `&after=${after}` : ''}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { last_id: string }).last_id
    p = `/api/v1/generations?limit=50&after=${after}`
  }
  const r = await time(p, token)
  rows.push([label, p, r.ms, r.bytes])
}

const drawn: string[] = []
if (await Bun.file('/usr/bin/chromium').exists()) {
  const { launch, signIn } = await import('../test/ui/browser.ts')
  const b = await launch()
  const page = await b.page()
  await signIn(page, base, ADMIN)
  for (const tf of ['24h', '30d', '30d hourly']) {
    const ms: number[] = []
    if (tf === '30d hourly') {
      await page.selectOption('select[name=granularity]', 'hour')
      await page.waitForFunction(() => document.body.dataset.usageRenderedMs !== undefined)
    }
    for (let i = 0; i < 5; i++) {
      const asked = await page.evaluate(() => (delete document.body.dataset.usageRenderedMs, performance.now()))
      if (tf === '24h') await page.reload()
      else if (tf === '30d') await page.selectOption('select[name=timeframe]', i % 2 ? '7d' : '30d')
      else await page.selectOption('select[name=metric]', i % 2 ? 'tokens' : 'cost')
      await page.waitForFunction(() => document.body.dataset.usageRenderedMs !== undefined)
      const at = Number(await page.evaluate(() => document.body.dataset.usageRenderedMs))
      // after a reload the clock starts at the navigation; after a switch, at the change
      ms.push(tf === '24h' ? at : at - asked)
    }
    const what: Record<string, string> = {
      '24h': 'reload → usage view drawn, 24h hourly (from navigation start)',
      '30d': 'timeframe switch 7d/30d daily → drawn',
      '30d hourly': 'metric switch on 30d hourly (720 bars, 8 models) → fetched and drawn',
    }
    drawn.push(`${what[tf]}: ${ms.map((x) => Math.round(x)).join(', ')} ms`)
  }
  if (b.problems.length) drawn.push(`browser problems: ${b.problems.join('; ')}`)
  await b.close()
}

await running.stop()
if (!values.keep) rmSync(dir, { recursive: true, force: true })
const load = (await Bun.file('/proc/loadavg').text().catch(() => '')).split(' ').slice(0, 3).join(' ')
console.log(`### ${N.toLocaleString('en-US')} records (seeded in ${(seeded / 1000).toFixed(1)} s); load average ${load}\n`)
console.log('| route | median of 5 | answer |\n|---|---:|---:|')
for (const [label, , ms, bytes] of rows) console.log(`| ${label} | ${ms.toFixed(1)} ms | ${(bytes / 1024).toFixed(1)} KB |`)
for (const d of drawn) console.log(`\n${d}`)
