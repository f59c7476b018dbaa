// PostgreSQL going away and coming back (a proxy between the gateway and the server is cut
// and restored): requests that need the database answer 503 with a JSON error, /health says
// the store is down, and service returns by itself. Needs SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { dropSchema, freshSchema, onPostgres } from '../helpers/database.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { startTcpProxy, type Proxy } from '../helpers/tcp-proxy.ts'

if (!onPostgres) console.log('test/scaleout/faults.test.ts: skipped, SWITCHYARD_TEST_DATABASE_URL is not set')

const schema = 'sy_t_faults_' + process.pid
const YAML = 'pricing:\n  overrides:\n    mock-gpt: { input_mtok: 100, output_mtok: 200 }\n'
let gw: Gateway
let proxy: Proxy
let funded: string

describe.skipIf(!onPostgres)('PostgreSQL down and back', () => {
  beforeAll(async () => {
    const direct = new URL(await freshSchema(schema))
    proxy = startTcpProxy(direct.hostname, Number(direct.port || 5432))
    direct.host = `127.0.0.1:${proxy.port}`
    gw = await startGateway({ yaml: YAML, env: { SWITCHYARD_DATABASE_URL: direct.toString(), SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_KEY_RPM: '100000' } })
    funded = (await gw.services.keys.create({ name: 'funded', credits: 10 })).key
  })
  afterAll(async () => {
    proxy?.restore()
    await gw?.stop()
    proxy?.stop()
    await dropSchema(schema)
  })

  const chat = (key: string) =>
    fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', max_tokens: 5, messages: [{ role: 'user', content: 'mock: text hi' }] }),
    })
  const files = () => fetch(`${gw.url}/api/v1/files`, { headers: { authorization: `Bearer ${gw.key}` } })
  const health = async () => {
    const r = await fetch(`${gw.url}/health`)
    return { status: r.status, body: (await r.json()) as Record<string, string> }
  }
  async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
    const end = Date.now() + ms
    for (;;) {
      const v = await get()
      if (ok(v)) return v
      if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(v)})`)
      await Bun.sleep(50)
    }
  }

  test('up: /health ok, a funded key is admitted, files are listed', async () => {
    expect(await health()).toEqual({ status: 200, body: { status: 'ok' } })
    expect((await chat(funded)).status).toBe(200)
    expect((await files()).status).toBe(200)
  })

  test('down: 503 with a JSON error for what needs the database, /health says so', async () => {
    proxy.cut()
    const started = Date.now()
    for (const res of [await chat(funded), await files()]) {
      expect(res.status).toBe(503)
      expect(res.headers.get('x-request-id')).toBeTruthy()
      expect(((await res.json()) as { error: string }).error).toContain('database is unavailable')
    }
    // refused at once, not after a long wait
    expect(Date.now() - started).toBeLessThan(6_000)
    const h = await until('health down', health, (h) => h.status === 503, 5_000)
    expect(h.body).toMatchObject({ status: 'degraded', database: 'down' })
    expect(typeof h.body.error).toBe('string')
    // a key in memory still answers what needs no database
    expect((await fetch(`${gw.url}/api/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } })).status).toBe(200)
  })

  test('back: service returns by itself, and what was recorded meanwhile is written', async () => {
    // an unlimited key needs no database to be served; its record waits for the database
    const during = await chat(gw.key)
    expect(during.status).toBe(200)
    const id = ((await during.json()) as { id: string }).id
    await Bun.sleep(1_000)
    proxy.restore()
    await until('health ok', health, (h) => h.status === 200, 5_000)
    await until('files listed', () => files().then((r) => r.status), (s) => s === 200, 5_000)
    await until('admitted', () => chat(funded).then((r) => r.status), (s) => s === 200, 5_000)
    const gen = await until('record written', () => fetch(`${gw.url}/api/v1/generations?id=${id}`, { headers: { authorization: `Bearer ${gw.key}` } }).then((r) => r.status), (s) => s === 200, 5_000)
    expect(gen).toBe(200)
  })
})
