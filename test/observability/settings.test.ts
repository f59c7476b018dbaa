// Tracing and log settings as the config loader reads them: OpenTelemetry's standard variables,
// the config file's `tracing.capture_content` and `log_format`, errors that name the variable,
// and `switchyard config` never printing a collector's credentials.
import { expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, maskedConfig } from '../../src/config/load.ts'
import { tracingSettings } from '../../src/config/tracing.ts'

const config = (env: Record<string, string>, yaml?: string) => {
  const cwd = mkdtempSync(join(tmpdir(), 'switchyard-settings-'))
  if (yaml !== undefined) writeFileSync(join(cwd, 'switchyard.yaml'), yaml)
  return loadConfig({ env, cwd })
}

test('no endpoint, no tracing; the base endpoint gets /v1/traces, the traces endpoint is used as it is', () => {
  expect(tracingSettings(undefined, {}).url).toBeNull()
  expect(tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).url).toBe('http://collector:4318/v1/traces')
  expect(tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://x.example/otlp/traces' }).url).toBe('https://x.example/otlp/traces')
  expect(tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).url).toBeNull()
  expect(tracingSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).url).toBeNull()
})

test('protocol, headers, service name, resource and sampler from the standard variables', () => {
  const t = tracingSettings(undefined, {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant=t1',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=t2',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=from-resource',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  })
  expect(t).toMatchObject({
    protocol: 'http/json',
    headers: { authorization: 'Bearer abc', 'x-tenant': 't2' },
    serviceName: 'from-resource',
    resource: { 'deployment.environment': 'prod' },
    sampler: 'parentbased_traceidratio',
    ratio: 0.25,
    captureContent: false,
  })
  expect(tracingSettings(undefined, { OTEL_SERVICE_NAME: 'gw', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }).serviceName).toBe('gw')
  expect(tracingSettings(undefined, {})).toMatchObject({ protocol: 'http/protobuf', serviceName: 'switchyard', sampler: 'parentbased_always_on', maxQueue: 2048, maxBatch: 512 })
})

test('what cannot work is refused at start, naming the variable', () => {
  const bad = (env: Record<string, string>) => () => tracingSettings(undefined, env)
  expect(bad({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported/)
  expect(bad({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER: expected one of/)
  expect(bad({ OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/)
  expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT: expected an http/)
  expect(bad({ OTEL_EXPORTER_OTLP_HEADERS: 'novalue' })).toThrow(/OTEL_EXPORTER_OTLP_HEADERS/)
  expect(bad({ OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toThrow(/OTEL_BSP_MAX_QUEUE_SIZE/)
})

test('capture_content from the config file (or the GenAI instrumentations\' variable); log_format from flag, env or file', () => {
  expect(config({}, 'tracing: { capture_content: true }\n').tracing.captureContent).toBe(true)
  expect(config({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }).tracing.captureContent).toBe(true)
  expect(config({ SWITCHYARD_TRACING_CAPTURE_CONTENT: 'false' }, 'tracing: { capture_content: true }\n').tracing.captureContent).toBe(false)
  expect(() => config({}, 'tracing: { capture_content: "yes" }\n')).toThrow(/tracing\.capture_content/)
  expect(config({}).logFormat).toBe('json')
  expect(config({}, 'log_format: text\n').logFormat).toBe('text')
  expect(config({ SWITCHYARD_LOG_FORMAT: 'text' }).logFormat).toBe('text')
  expect(loadConfig({ flags: { 'log-format': 'text' }, env: {}, cwd: tmpdir() }).logFormat).toBe('text')
  expect(() => config({ SWITCHYARD_LOG_FORMAT: 'xml' })).toThrow(/log-format: expected json or text/)
})

test('switchyard config masks the headers sent to the collector', () => {
  const c = config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20secret-token' })
  const shown = JSON.stringify(maskedConfig(c))
  expect(shown).not.toContain('secret-token')
  expect((maskedConfig(c).tracing as any).headers.authorization).toBe('***(19 chars)')
  // and the URL's credentials; the signal's path goes on the base URL's path, before its query
  const u = config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:hunter2pass@c:4318/otlp?token=QUERYSECRET' })
  expect(u.tracing.url).toBe('http://user:hunter2pass@c:4318/otlp/v1/traces?token=QUERYSECRET')
  const masked = JSON.stringify(maskedConfig(u))
  expect(masked).not.toContain('hunter2pass')
  expect(masked).not.toContain('QUERYSECRET')
  expect((maskedConfig(u).tracing as any).url).toBe('http://user:***@c:4318/otlp/v1/traces?token=***')
})
