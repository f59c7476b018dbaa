// `--log-format json` (the default): one JSON object per line, the access log naming the request's
// id and, when it is traced, its trace and span, so logs join traces. `text` is for a terminal.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '../../src/http/log.ts'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { cleanup, spawnGateway } from '../helpers/server.ts'

const INCOMING = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' }

let up: FakeUpstream
let otlp: OtlpReceiver
beforeAll(async () => {
  ;[up, otlp] = await Promise.all([startFakeUpstream(), startOtlpReceiver()])
  up.script({ json: fixture('openai/chat/nonstream-text.json') })
})
afterAll(async () => {
  await Promise.all([up.stop(), otlp.stop()])
})

async function serveAndAsk(args: string[], env: Record<string, string> = {}) {
  const key = 'sk-sy-logs-' + crypto.randomUUID()
  const gw = await spawnGateway({ args, env: { SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: `${up.url}/v1`, ...env } })
  try {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent: `00-${INCOMING.traceId}-${INCOMING.spanId}-01` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    const out = await gw.waitForOutput(requestId)
    return { requestId, out }
  } finally {
    gw.kill('SIGTERM')
    await gw.exited
    cleanup(gw.dataDir)
  }
}

/** The log lines: what follows the start-up banner (plain text, for people). */
const logLines = (out: string) => out.split('\n').filter((l) => l !== '' && !l.startsWith('switchyard ') && !l.startsWith('  '))

test('--log-format json: every log line is one JSON object; the access log has the request id, trace id and span id', async () => {
  const { requestId, out } = await serveAndAsk(['--log-format', 'json'], { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20' })
  const lines = logLines(out).map((l) => JSON.parse(l) as Record<string, unknown>)
  const access = lines.find((l) => l.msg === 'request' && l.request_id === requestId)!
  expect(access).toMatchObject({ level: 'info', method: 'POST', path: '/api/alpha/v1/chat/completions', status: 200, trace_id: INCOMING.traceId })
  // the span the line names is the request's own span, under the client's
  const spans = await otlp.waitFor((s) => s.some((x) => x.kind === SPAN_KIND.server))
  const server = spans.find((s) => s.kind === SPAN_KIND.server)!
  expect(access.span_id).toBe(server.spanId)
  expect(server.parentSpanId).toBe(INCOMING.spanId)
  expect(server.attributes['switchyard.request.id']).toBe(requestId)
}, 30_000)

test('untraced, the access log has no trace fields; SWITCHYARD_LOG_FORMAT=text gives plain lines with the same fields', async () => {
  const json = await serveAndAsk([])
  const line = logLines(json.out).map((l) => JSON.parse(l)).find((l) => l.request_id === json.requestId)
  expect(line.trace_id).toBeUndefined()
  expect(line.span_id).toBeUndefined()

  const text = await serveAndAsk([], { SWITCHYARD_LOG_FORMAT: 'text', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url })
  const plain = logLines(text.out).find((l) => l.includes(`request_id=${text.requestId}`))!
  expect(plain).toMatch(/^\d{4}-\d\d-\d\dT\S+Z INFO  request /)
  expect(plain).toContain(`trace_id=${INCOMING.traceId}`)
  expect(plain).toContain('path=/api/alpha/v1/chat/completions status=200')
  expect(() => JSON.parse(plain)).toThrow()
}, 30_000)

test('text lines stay one line: values with spaces, quotes or newlines are quoted', () => {
  const lines: string[] = []
  const log = createLogger('info', (l) => lines.push(l), 'text')
  log.warn('close hook failed', { error: 'Error: boom\n  at x', n: 3, ok: true, absent: undefined })
  expect(lines).toHaveLength(1)
  expect(lines[0]!.split('\n')).toEqual([expect.stringMatching(/ WARN  close hook failed error="Error: boom\\n  at x" n=3 ok=true$/), ''])
})

// a model id a client chose goes into the access log: on a terminal, its escapes would erase
// and rewrite the line
test('text lines never carry a control character: ESC, DEL and the C1 set are escaped', () => {
  const lines: string[] = []
  const log = createLogger('info', (l) => lines.push(l), 'text')
  log.info('request', { model: 'mock-\x1b[2K\x1b[1Gfake\x1b[31mERROR', c1: 'a\x9bb', del: 'a\x7f', plain: 'mock-gpt' })
  expect(lines).toHaveLength(1)
  expect(lines[0]).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/)
  expect(lines[0]).toContain('model="mock-\\u001b[2K\\u001b[1Gfake\\u001b[31mERROR" c1="a\\u009bb" del="a\\u007f" plain=mock-gpt')
})

