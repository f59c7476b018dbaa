// The compiled binary (scripts/build.ts) carries OpenTelemetry's SDK and exporters: copied alone
// into an empty directory, it exports a request's spans and its batch items' (from the worker
// threads) to a collector, in protobuf and in JSON, and its JSON log lines name the trace.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { batchIds } from '../../src/tracing/batch.ts'
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { BUN, cleanup, ROOT, spawnGateway, tempDir } from '../helpers/server.ts'

const dir = tempDir('switchyard-tracing-bin-')
const bin = join(dir, 'switchyard')
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

for (const protocol of ['http/protobuf', 'http/json']) {
  test(`the binary alone exports spans over ${protocol}: a request's, and a batch's items' from its worker threads`, async () => {
    otlp.spans.length = 0
    const key = 'sk-sy-binary-' + crypto.randomUUID()
    const env = { SWITCHYARD_BOOTSTRAP_KEY: key, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_BSP_SCHEDULE_DELAY: '20' }
    const gw = await spawnGateway({ cmd: [bin], env, args: ['--log-format', 'json'], cwd: dir, dataDir: join(dir, `data-${protocol.replace('/', '-')}`) })
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    try {
      const traceId = 'a3ce929d0e0e47364bf92f3577b34da6'
      const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
        method: 'POST',
        headers: { ...headers, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text hello' }] }),
      })
      expect(res.status).toBe(200)
      const spans = await otlp.waitFor((s) => s.filter((x) => x.traceId === traceId).length === 2)
      const server = spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND.server)!
      expect(server.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'mock-gpt' })
      expect(spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND.client)!.parentSpanId).toBe(server.spanId)
      const out = await gw.waitForOutput(`"trace_id":"${traceId}"`)
      expect(out).toContain(`"span_id":"${server.spanId}"`)

      const requests = [1, 2].map((i) => ({ custom_id: `b${i}`, model: 'mock-gpt', messages: [{ role: 'user', content: `mock: text ${i}` }] }))
      const id = ((await (await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests }) })).json()) as any).id
      const batch = batchIds(id)
      // the batch's span, two items under it, each with its call
      const inBatch = await otlp.waitFor((s) => s.filter((x) => x.traceId === batch.traceId).length === 5, 20_000)
      const items = inBatch.filter((s) => s.traceId === batch.traceId && s.parentSpanId === batch.spanId)
      expect(items).toHaveLength(2)
    } finally {
      gw.kill('SIGTERM')
      expect(await gw.exited).toBe(0)
    }
  }, 60_000)
}
