// A call the provider's retries send again (a 503, then another, then an answer) is one call of
// the request and three sends upstream. Each send is counted by its status in the upstream
// series, and the call's span says how often it was sent again: a provider failing two sends of
// three read as a 0 % error rate before.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startOtlpReceiver, SPAN_KIND, type OtlpReceiver } from '../helpers/otlp-receiver.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { byLabels, parseMetrics } from '../metrics/parse.ts'

let up: FakeUpstream
let otlp: OtlpReceiver
let gw: Gateway
beforeAll(async () => {
  ;[up, otlp] = await Promise.all([startFakeUpstream(), startOtlpReceiver()])
  gw = await startGateway({
    yaml: `providers:\n  - { id: flaky, kind: openai, base_url: ${up.url}/v1, api_key: sk-f, max_retries: 2 }\n`,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '20' },
  })
})
afterAll(async () => {
  await gw.stop()
  await Promise.all([up.stop(), otlp.stop()])
})

test('each send of a call sent again is counted by its status, and its span counts the resends', async () => {
  const busy = { status: 503, json: { error: { message: 'busy', type: 'server_error' } } }
  up.script(busy, busy, { json: fixture('openai/chat/nonstream-text.json') })
  const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  })
  expect(res.status).toBe(200)
  expect(up.requests).toHaveLength(3)
  let upstream: Record<string, number> = {}
  for (const deadline = Date.now() + 5_000; Date.now() < deadline && !upstream['provider=flaky,status=200']; await Bun.sleep(20)) {
    upstream = byLabels(parseMetrics(await gw.services.metrics!.scrape('prometheus')), 'switchyard_upstream_requests_total', ['provider', 'status'])
  }
  expect(upstream).toEqual({ 'provider=flaky,status=503': 2, 'provider=flaky,status=200': 1 })
  const spans = await otlp.waitFor((s) => s.some((x) => x.kind === SPAN_KIND.server))
  const clients = spans.filter((s) => s.kind === SPAN_KIND.client)
  expect(clients).toHaveLength(1)
  expect(clients[0]!.attributes).toMatchObject({ 'http.request.resend_count': 2, 'http.response.status_code': 200 })
})
