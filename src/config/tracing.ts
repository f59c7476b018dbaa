// Where traces go, read from OpenTelemetry's standard variables (what every SDK and collector
// documents), and whether prompts and completions go with them (the config file's
// `tracing.capture_content`). No endpoint, no tracing: nothing is watched.
import { ConfigError } from './errors.ts'
import { maskUrl } from './mask-url.ts'

export type SamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio'

export interface TracingSettings {
  /** The OTLP/HTTP traces URL; null: tracing is off. */
  url: string | null
  protocol: 'http/protobuf' | 'http/json'
  /** Sent with every export (a collector's credentials). */
  headers: Record<string, string>
  serviceName: string
  /** Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`). */
  resource: Record<string, string>
  sampler: SamplerName
  /** The ratio of the traceidratio samplers, 0–1. */
  ratio: number
  timeoutMs: number
  /** Spans waiting for export at most; past that they are dropped and counted. */
  maxQueue: number
  maxBatch: number
  delayMs: number
  /** Prompts and completions on the spans (`gen_ai.input.messages`, `gen_ai.output.messages`). */
  captureContent: boolean
}

const SAMPLERS: readonly SamplerName[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']

type Env = Record<string, string | undefined>

const str = (v: string | undefined) => (v !== undefined && v.trim() !== '' ? v.trim() : undefined)

function int(env: Env, name: string, fallback: number, min: number): number {
  const v = str(env[name])
  if (v === undefined) return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name}: expected an integer ≥ ${min}, got "${v}"`)
  return n
}

/** `k1=v1,k2=v2`, values percent-decoded (the OTLP exporter's header and resource format). */
export function keyValues(text: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const pair of (text ?? '').split(',')) {
    if (pair.trim() === '') continue
    const eq = pair.indexOf('=')
    if (eq <= 0) throw new ConfigError(`${name}: expected key=value pairs separated by commas`)
    try {
      out[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim())
    } catch {
      throw new ConfigError(`${name}: a key or value is not valid percent-encoding`)
    }
  }
  return out
}

function tracesUrl(env: Env): string | null {
  const own = str(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  const base = str(env.OTEL_EXPORTER_OTLP_ENDPOINT)
  const url = own ?? base
  if (!url) return null
  const name = own ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'
  if (!/^https?:\/\//.test(url)) throw new ConfigError(`${name}: expected an http:// or https:// URL (OTLP over HTTP)`)
  if (own) return own
  // the signal's own endpoint is used as it is; the base one gets the signal's path, on its path
  // (not after a query string)
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new ConfigError(`${name}: not a valid URL`)
  }
  u.pathname = u.pathname.replace(/\/+$/, '') + '/v1/traces'
  return u.toString()
}

function ratio(env: Env): number {
  const v = str(env.OTEL_TRACES_SAMPLER_ARG)
  if (v === undefined) return 1
  const n = Number(v)
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG: expected a ratio between 0 and 1, got "${v}"`)
  return n
}

export function tracingSettings(file: { capture_content?: boolean } | undefined, env: Env): TracingSettings {
  const off = str(env.OTEL_SDK_DISABLED) === 'true' || str(env.OTEL_TRACES_EXPORTER) === 'none'
  const protocol = str(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? str(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? 'http/protobuf'
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL: "${protocol}" is not supported; use http/protobuf (the default) or http/json`)
  }
  const sampler = (str(env.OTEL_TRACES_SAMPLER) ?? 'parentbased_always_on') as SamplerName
  if (!SAMPLERS.includes(sampler)) throw new ConfigError(`OTEL_TRACES_SAMPLER: expected one of ${SAMPLERS.join(', ')}, got "${sampler}"`)
  const resource = keyValues(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES')
  const capture = str(env.SWITCHYARD_TRACING_CAPTURE_CONTENT) ?? str(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)
  const maxBatch = int(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1)
  return {
    url: off ? null : tracesUrl(env),
    protocol,
    headers: { ...keyValues(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'), ...keyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    serviceName: str(env.OTEL_SERVICE_NAME) ?? resource['service.name'] ?? 'switchyard',
    resource,
    sampler,
    ratio: ratio(env),
    timeoutMs: int(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', int(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 1), 1),
    maxQueue: Math.max(maxBatch, int(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1)),
    maxBatch,
    delayMs: int(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0),
    captureContent: capture !== undefined ? capture === 'true' : file?.capture_content === true,
  }
}

/** For `switchyard config`: header values are a collector's credentials. */
export function maskedTracing(t: TracingSettings): TracingSettings {
  // and the URL's password and query values too (a token in `?token=`)
  return { ...t, url: t.url && maskUrl(t.url), headers: Object.fromEntries(Object.keys(t.headers).map((k) => [k, `***(${t.headers[k]!.length} chars)`])) }
}
