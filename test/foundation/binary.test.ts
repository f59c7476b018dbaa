// The compiled binary, copied alone into an empty directory: starts, migrates, serves.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { onPostgres } from '../helpers/database.ts'
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { BUN, cleanup, ROOT, runCli, spawnGateway, tempDir } from '../helpers/server.ts'

const dir = tempDir('switchyard-bin-')
const bin = join(dir, 'switchyard')
const ADMIN = 'adm-binary-' + crypto.randomUUID()
/** Every worker entry point the binary embeds (scripts/build.ts), as the metrics name them. */
const WORKERS = ['db/checkpoint-worker.ts', 'db/json-rows-worker.ts', 'tokens/worker.ts', 'batches/worker.ts', 'batches/writer-worker.ts', 'batches/deflate-worker.ts', 'http/parts-worker.ts', 'tracing/export-worker.ts', 'http/inflate-worker.ts']
let otlp: OtlpReceiver

beforeAll(async () => {
  otlp = await startOtlpReceiver()
  const build = Bun.spawnSync([BUN, join(ROOT, 'scripts/build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
  copyFileSync(join(ROOT, 'dist/switchyard'), bin)
}, 120_000)
afterAll(async () => {
  await otlp.stop()
  cleanup(dir)
})

test('the binary alone creates and migrates a fresh data dir, serves /health, /api/v1/models and a 401, and each embedded worker loads and answers', async () => {
  expect((await runCli(['version'], {}, [bin])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  const key = 'sk-sy-binary-' + crypto.randomUUID()
  // run from the empty dir: its default data dir is ./data
  const gw = await spawnGateway({ cmd: [bin], env: { SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_ADMIN_TOKEN: ADMIN, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20' }, cwd: dir, dataDir: join(dir, 'data'), args: ['--log-level', 'debug'] })
  try {
    if (!onPostgres) {
      expect(existsSync(join(dir, 'data', 'switchyard.db'))).toBe(true)
      // the worker entry point is embedded and runs (not the inline-checkpoint fallback)
      expect(await gw.waitForOutput('checkpoint worker started')).toContain('checkpoint worker started')
    } else expect(await gw.waitForOutput('database: postgresql')).toContain('database: postgresql')
    expect(await (await fetch(gw.url + '/health')).json()).toEqual({ status: 'ok' })
    // the binary re-executed itself (same pid) with the fetch limit raised
    if (process.platform === 'linux') expect(readFileSync(`/proc/${gw.proc.pid}/environ`, 'latin1').split('\0')).toContain('BUN_CONFIG_MAX_HTTP_REQUESTS=10000')
    const models = await fetch(gw.url + '/api/v1/models', { headers: { authorization: `Bearer ${key}` } })
    expect(models.status).toBe(200)
    expect(((await models.json()) as { data: { id: string }[] }).data.length).toBeGreaterThan(10)
    expect((await fetch(gw.url + '/api/v1/models', { headers: { authorization: 'Bearer sk-sy-wrong' } })).status).toBe(401)
    // the dashboard is embedded: the page and both of its assets, with the CSP
    const page = await fetch(gw.url + '/ui')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    const assets = [...(await page.text()).matchAll(/"(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]!)
    expect(assets.length).toBe(2)
    for (const a of assets) expect((await fetch(gw.url + a)).status).toBe(200)
    // a body of too many parts is refused from the embedded parts worker, naming its largest array
    const parts = Array.from({ length: 250_000 }, () => ({ type: 'text', text: 'a' }))
    const crowded = await fetch(gw.url + '/api/alpha/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: parts }] }),
    })
    expect(crowded.status).toBe(400)
    expect(((await crowded.json()) as { error: string }).error).toContain('messages[0].content: 250000 items')
    // a compressed body (inflated by the embedded decompressing worker) is read whole, or refused past the limit
    const chat = (encoding: string, body: Uint8Array) => fetch(gw.url + '/api/alpha/v1/chat/completions', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': encoding }, body: new Blob([new Uint8Array(body)]) })
    const squeezed = await chat('gzip', Bun.gzipSync(JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text squeezed' }] })))
    expect(squeezed.status).toBe(200)
    expect(((await squeezed.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('squeezed')
    expect((await chat('zstd', Bun.zstdCompressSync(new Uint8Array(64 << 20)))).status).toBe(413)
    // and the CLI's batches watch, on the running server's data dir
    const watch = await runCli(['batches', 'watch', 'batch_none', '--data-dir', join(dir, 'data')], {}, [bin])
    expect(watch.code).toBe(1)
    expect(watch.stderr).toContain('no batch with id batch_none')
    // the rest of the workers' work: a thread with a row too large to parse here (cut in pieces on PostgreSQL too), a count, a batch run, exported spans
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const respond = async (body: object) => {
      const res = await fetch(gw.url + '/api/alpha/v1/responses', { method: 'POST', headers, body: JSON.stringify({ model: 'mock-gpt', ...body }) })
      expect(res.status).toBe(200)
      return (await res.json()) as { id: string; output: { content?: { text: string }[] }[] }
    }
    const first = await respond({ input: [{ role: 'user', content: 'x'.repeat(600_000) }, { role: 'user', content: 'mock: text first' }] })
    const second = await respond({ previous_response_id: first.id, input: 'mock: text second' })
    expect(second.output.at(-1)!.content![0]!.text).toBe('second')
    const counted = await fetch(gw.url + '/api/alpha/v1/responses/input_tokens', { method: 'POST', headers, body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hello world' }) })
    expect(await counted.json()).toEqual({ object: 'response.input_tokens', input_tokens: 2 })
    const batch = (await (await fetch(gw.url + '/api/v1/batches', { method: 'POST', headers, body: JSON.stringify({ requests: [{ custom_id: 'b1', model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text batched' }] }] }) })).json()) as { id: string }
    let b: { status?: string; output_file_id?: string } = {}
    for (let i = 0; i < 400 && !b.output_file_id; i++) {
      await Bun.sleep(25)
      b = (await (await fetch(`${gw.url}/api/v1/batches/${batch.id}`, { headers })).json()) as typeof b
    }
    expect(b.status).toBe('completed')
    // its export, compressed by the embedded compressing worker
    const exported = await fetch(`${gw.url}/api/v1/batches/${batch.id}/export?gzip=true`, { headers })
    expect(exported.status).toBe(200)
    expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await exported.arrayBuffer())))).toContain('"b1"')
    await otlp.waitFor((spans) => spans.length > 0)
    // each embedded worker entry point loaded and answered: its fallback on this thread never counts here
    const metrics = await (await fetch(gw.url + '/metrics', { headers: { authorization: `Bearer ${ADMIN}` } })).text()
    const loaded = Object.fromEntries([...metrics.matchAll(/^switchyard_worker_threads_loaded_total\{entry="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]))
    // PostgreSQL checkpoints itself: no checkpoint worker there
    for (const entry of WORKERS.filter((w) => !onPostgres || w !== 'db/checkpoint-worker.ts')) expect({ entry, loaded: (loaded[entry] ?? 0) > 0 }).toEqual({ entry, loaded: true })
  } finally {
    gw.kill('SIGTERM')
    expect(await gw.exited).toBe(0)
  }
}, 90_000)
