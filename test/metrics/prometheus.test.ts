// A real Prometheus (Debian's package, /usr/bin/prometheus) scrapes the gateway every second
// with the admin token, as the README's scrape config says, and its HTTP API answers: the
// target is up, the requests sent are all counted, and the README's queries are valid PromQL
// with data. Skipped, saying so, where Prometheus is not installed (.ci/run installs it as root).
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import OpenAI from 'openai'
import { startGateway, tempDir, type Gateway } from '../helpers/server.ts'

const PROMETHEUS = '/usr/bin/prometheus'
const present = existsSync(PROMETHEUS)
if (!present) console.warn(`test/metrics: SKIPPED the Prometheus test: ${PROMETHEUS} is absent (apt-get install -y --no-install-recommends prometheus)`)

const ADMIN = 'adm-prom-' + crypto.randomUUID()
const ask = { messages: [{ role: 'user' as const, content: 'hi' }] }

/** A port nothing listens on now. */
function freePort(): number {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

describe.skipIf(!present)('Prometheus scraping the gateway', () => {
  let gw: Gateway
  let prom: ReturnType<typeof Bun.spawn>
  let api: string
  const dir = tempDir('switchyard-prometheus-')

  beforeAll(async () => {
    gw = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: ADMIN }, yaml: 'metrics: { per_key: true }\n' })
    const target = new URL(gw.url).host
    const port = freePort()
    api = `http://127.0.0.1:${port}/api/v1`
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: switchyard
    authorization:
      credentials: ${ADMIN}
    static_configs:
      - targets: ['${target}']
`,
    )
    mkdirSync(join(dir, 'data'))
    prom = Bun.spawn([PROMETHEUS, `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdout: 'ignore', stderr: 'pipe' })
  })

  afterAll(async () => {
    prom?.kill()
    await prom?.exited
    await gw?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  async function query(q: string): Promise<{ status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } }> {
    const res = await fetch(`${api}/query?query=${encodeURIComponent(q)}`)
    return (await res.json()) as any
  }

  /** Polls a query until `ok` holds for its result (Prometheus scrapes once a second). */
  async function until(q: string, ok: (values: string[]) => boolean, ms = 30_000): Promise<string[]> {
    let last: unknown
    for (const deadline = Date.now() + ms; Date.now() < deadline; await Bun.sleep(250)) {
      try {
        const r = await query(q)
        const values = r.data.result.map((x) => x.value[1])
        if (ok(values)) return values
        last = r
      } catch (e) {
        last = e // Prometheus is still starting
      }
    }
    throw new Error(`${q}: never held; last answer ${JSON.stringify(last)}`)
  }

  test('up == 1, and sum(switchyard_requests_total) is the requests sent', async () => {
    await until('up{job="switchyard"}', (v) => v[0] === '1')
    const openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
    for (let i = 0; i < 4; i++) await openai.chat.completions.create({ model: 'mock-gpt', ...ask })
    for await (const _ of await openai.chat.completions.create({ model: 'mock-gpt', ...ask, stream: true }));
    await openai.responses.create({ model: 'mock-gpt', input: 'hi' })
    await anthropic.messages.create({ model: 'mock-claude', max_tokens: 50, ...ask })
    expect(await until('sum(switchyard_requests_total)', (v) => v[0] === '7')).toEqual(['7'])
    expect(await until('sum by (surface) (switchyard_requests_total)', (v) => v.length === 3)).toHaveLength(3)
  }, 60_000)

  test("the README's queries are valid PromQL and have data", async () => {
    // a rate needs two samples after the requests: each query is polled until it has data
    const readme = [
      '(sum by (provider) (rate(switchyard_upstream_requests_total{status!="200"}[5m])) or sum by (provider) (rate(switchyard_upstream_requests_total[5m])) * 0) / sum by (provider) (rate(switchyard_upstream_requests_total[5m]))',
      'histogram_quantile(0.95, sum by (le, model) (rate(switchyard_request_duration_seconds_bucket[5m])))',
      'sum by (account) (increase(switchyard_cost_usd_total[1h]))',
    ]
    for (const q of readme) {
      const values = await until(q, (v) => v.length > 0)
      expect(values.length).toBeGreaterThan(0)
    }
  }, 60_000)
})
