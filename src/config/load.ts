// Flags > env > config file > defaults, validated with TypeBox. A bad file is fatal at
// start with a message that names the field.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { existsSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, resolve } from 'node:path'
import { maskUrl as maskDatabaseUrl } from '../db/pg-url.ts'
import { ConfigError } from './errors.ts'
import { numbersFromStrings } from './numbers.ts'
import { maskUrl } from './mask-url.ts'
import { duplicateKey } from './duplicate-keys.ts'
import { maskKey, type ProviderConfig, type RoutingSettings } from './providers.ts'
import { ConfigFileSchema, FamilyProviders, ProviderList, type ConfigFile, type ModelEntry, type PriceEntry } from './schema.ts'
import { checkDeployments, resolveProviders, resolveRouting } from './upstreams.ts'
import { DEFAULT_FETCH_LIMIT, FETCH_LIMIT_VAR, MAX_FETCH_LIMIT } from '../runtime/start-env.ts'
import type { LogFormat, LogLevel } from '../http/log.ts'
import { maskedTracing, tracingSettings, type TracingSettings } from './tracing.ts'
import { cacheSettings, type CacheSettings } from './cache.ts'
import { recordSettings, type RecordSettings } from './records.ts'
import { corsOriginsProblem } from '../http/cors.ts'
import { proxyEntryProblem } from '../http/proxies.ts'
import { answersOffline, replaySettings, type ReplaySettings } from './replay.ts'

export type { LogLevel }

export interface Config {
  host: string
  port: number
  dataDir: string
  trustedProxies: string[]
  /** Origins whose pages may call the API routes from a browser: `*` (the default), a list, or none. */
  corsOrigins: string[]
  /** The gateway's URL as its clients reach it (behind a proxy that ends TLS, or under a path), for the URLs it hands out; unset: each request's own origin. */
  publicUrl?: string
  shutdownGraceMs: number
  /** Upstream HTTP calls in flight at once (Bun's fetch client limit, set at start by `serve`). */
  maxUpstreamConnections: number
  /** Threads that count tokens (the mock's usage, interrupted streams); unset: one per core, started as load needs them. */
  tokenWorkers?: number
  adminToken?: string
  bootstrapKey?: string
  logLevel: LogLevel
  /** One JSON object per line (the default), or plain text for a terminal. */
  logFormat: LogFormat
  /** Traces to an OpenTelemetry collector (OTEL_* variables); `url` null: none. */
  tracing: TracingSettings
  /**
   * The configured upstreams by id, in the config's order (the shorthand's are `openai` and
   * `anthropic`). The built-in `mock` is not among them; a family without a provider of its own
   * kind is served by it.
   */
  providers: Record<string, ProviderConfig>
  /** How requests move between a model's deployments and on to its fallbacks. */
  routing: RoutingSettings
  limits: {
    keyRpm: number
    ipRpm: number
    keyBurstRps: number
    maxBodyBytes: number
    /** The bytes of JSON bodies read and parsed at once, all requests together: a large body past it waits its turn (503); http/body-budget.ts. */
    bodyBudgetBytes: number
    maxUploadBytes: number
    /** The bytes of live files one key may keep (its uploads; what the gateway writes for it counts, and is never refused); null: no limit. */
    keyFileBytes: number | null
    /** A request body's pace: the seconds it may take before it must average `bodyMinBytesPerS` (else 408). */
    bodyGraceS: number
    bodyMinBytesPerS: number
    /** Seconds a connection may sit idle but while a request of a key waits for its answer: keep-alive, a half-sent request, /health. */
    idleTimeoutS: number
  }
  pricing: { discount: number; overrides: Record<string, PriceEntry> }
  models: ModelEntry[]
  compat: { crossFamily: 'reject' | 'translate' }
  /** Records (`records:`, formerly `generations:`): kept `retentionDays`; at most `maxBacklog` wait for a database that cannot take them. */
  generations: RecordSettings
  /** The exact response cache: who is cached by default, its scope and its bound. */
  cache: CacheSettings
  /** Cassettes: upstream exchanges recorded to a directory or answered from it (src/replay); null: every call goes upstream. */
  replay: ReplaySettings | null
  /** Stored responses threads: the most stored bytes a thread may hold and still be continued; days a response no later one continues is kept (0: until deleted). */
  responses: { maxThreadBytes: number; retentionDays: number; toolCallsStatus: 'requires_action' | 'completed' }
  /** GET /metrics: without the admin token when public; key id and account labels with perKey. */
  metrics: { public: boolean; perKey: boolean }
  /** Fetching media URLs named in requests (documents, images): guarded against private addresses. */
  media: { allowPrivateUrls: boolean; maxBytes: number; maxRequestBytes: number; timeoutMs: number }
  /** Batches: the worker pool and the limits of one batch. */
  batches: {
    workers: number
    maxConcurrency: number
    /** Items in flight on this instance across all batches, shared evenly between keys. */
    maxInFlight: number
    maxRetries: number
    maxItemsPerSecond: number
    maxItems: number
    /** Instances sharing a database: how long a claimed item stays theirs without a renewal. */
    leaseMs: number
    /** Days an ended batch's items are kept (0: until the batch is deleted). */
    retentionDays: number
  }
  /**
   * PostgreSQL instead of the data dir's SQLite file, when a postgres:// URL is set. `takeAhead`:
   * without Redis, a busy funded key's next holds are made while it is served (billing/pg-ledger.ts).
   */
  database: { url?: string; takeAhead: boolean; poolSize: number }
  /** One of several instances behind a balancer: refuses a store that is not shared. */
  cluster: boolean
  /** Shared state for several instances; null: everything per instance, in memory. */
  redis: RedisSettings | null
  /** File blobs and batch outputs in S3-compatible storage; null: the data dir's disk. */
  s3: S3Settings | null
  /** Where the config came from, for the banner and `switchyard config`. */
  source: string | null
}

export interface RedisSettings {
  url: string
  /** Redis unreachable: `deny` answers 503, `allow` serves on per-instance limits. */
  onError: 'deny' | 'allow'
  timeoutMs: number
  /** Every key and channel starts with it. */
  prefix: string
  /**
   * A busy key far from its limits and balance gets its next request's slot and hold taken
   * while the current one is served (cluster/ahead.ts); off: every request waits for Redis.
   * Absent: off (the stores' own tests); the config's default is on.
   */
  takeAhead?: boolean
}

export interface S3Settings {
  bucket: string
  endpoint?: string
  region?: string
  accessKeyId?: string
  secretAccessKey?: string
  sessionToken?: string
  prefix: string
  redirectDownloads: boolean
  presignTtlS: number
  pathStyle: boolean
}

export { ConfigError, maskUrl }

export interface ConfigInputs {
  flags?: Record<string, string | boolean | undefined>
  env?: Record<string, string | undefined>
  cwd?: string
}

const validator = TypeCompiler.Compile(ConfigFileSchema)

const MiB = 1024 * 1024
/** Bun's longest idle timeout: what a request of a key may sit silent (a long generation before its first byte). */
export const IDLE_MAX_S = 255

/** `${VAR}` and `${VAR:-default}` in every string value of the parsed file. */
export function expandEnv(value: unknown, env: Record<string, string | undefined>, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, dflt?: string) => {
      const v = env[name]
      if (v !== undefined && v !== '') return v
      if (dflt !== undefined) return dflt
      throw new ConfigError(`config ${path || '(root)'}: environment variable ${name} is not set`)
    })
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, `${path}[${i}]`))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, path ? `${path}.${k}` : k)]))
  }
  return value
}

export function parseConfigFile(text: string, env: Record<string, string | undefined>, file: string): ConfigFile {
  let raw: unknown
  try {
    raw = Bun.YAML.parse(text) ?? {}
  } catch (e) {
    throw new ConfigError(`config ${file}: not valid YAML: ${(e as Error).message}`)
  }
  // the parser keeps the last of a key given twice, without a word
  const twice = duplicateKey(text)
  if (twice) throw new ConfigError(`config ${file}: line ${twice.again}: "${twice.key.slice(0, 80)}" is given twice in one mapping (line ${twice.first} has it too); the second would silently replace the first`)
  // `key_rpm: "60"` or `port: ${PORT}`: numbers and on/off values written as strings, read as such
  const expanded = numbersFromStrings(ConfigFileSchema, expandEnv(raw, env))
  // `providers` is a list or the shorthand object: checked as the one it is, so the error names its field
  const providers = (expanded as { providers?: unknown } | null)?.providers
  if (providers !== undefined && providers !== null) {
    if (typeof providers !== 'object') throw new ConfigError(`config ${file}: providers: expected a list of providers ({id, kind, base_url, api_key}) or the shorthand {openai: …, anthropic: …}`)
    const check = Array.isArray(providers) ? providerList : familyProviders
    if (!check.Check(providers)) throw new ConfigError(`config ${file}: ${schemaError(check, providers, '/providers')}`)
  }
  if (!validator.Check(expanded)) throw new ConfigError(`config ${file}: ${schemaError(validator, expanded)}`)
  return expanded
}

const providerList = TypeCompiler.Compile(ProviderList)
const familyProviders = TypeCompiler.Compile(FamilyProviders)

/** The first schema error as `field: message`, the field written as in YAML (`models[0].deployments[1].weight`). */
function schemaError(check: { Errors(v: unknown): { First(): { path: string; message: string; schema: unknown } | undefined } }, value: unknown, base = ''): string {
  const first = check.Errors(value).First()!
  const field = (base + first.path).split('/').filter(Boolean).reduce((f, seg) => (/^\d+$/.test(seg) ? `${f}[${seg}]` : f ? `${f}.${seg}` : seg), '') || '(root)'
  // a union says only "Expected union value": say what it takes
  return `${field}: ${(first.schema as Expected).anyOf ? `expected ${expected(first.schema as Expected)}` : first.message}`
}

interface Expected {
  const?: unknown
  type?: string
  minimum?: number
  maximum?: number
  anyOf?: Expected[]
}

/** What a schema takes, in words: `"timeout"`, `an integer 100-599`, `one of …`. */
function expected(s: Expected): string {
  if (s.const !== undefined) return JSON.stringify(s.const)
  const range = s.minimum !== undefined && s.maximum !== undefined ? ` ${s.minimum}-${s.maximum}` : s.minimum !== undefined ? ` of at least ${s.minimum}` : ''
  if (s.type === 'integer') return `an integer${range}`
  if (s.anyOf) return `one of ${s.anyOf.map(expected).join(', ')}`
  return `a ${s.type ?? 'value'}${range}`
}

/** A number from the environment or a flag: plain decimal digits only (not `0x50`, `1e3` or `Infinity`), never negative. */
function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined
  const n = /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN
  if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${name}: expected a non-negative number, got "${v}"`)
  return n
}

/** An environment number held to the range its file setting has: a whole number from `min` (to `max`). */
function int(v: string | undefined, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const n = num(v, name)
  if (n === undefined) return undefined
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name}: expected an integer ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `${min}-${max}`}, got "${v}"`)
  return n
}

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/** An on/off setting from the environment: a clear yes or no, else an error (`SWITCHYARD_CLUSTER=TRUE` turned nothing on). */
function flag(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined || v.trim() === '') return undefined
  const w = v.trim().toLowerCase()
  if (TRUE.has(w)) return true
  if (FALSE.has(w)) return false
  throw new ConfigError(`${name}: expected true or false, got "${v.slice(0, 40)}"`)
}

/** A share from the environment: 0 to 1 (a discount of 10 meant 10 % made everything free). */
function fraction(n: number | undefined, name: string): number | undefined {
  if (n !== undefined && n > 1) throw new ConfigError(`${name}: expected a fraction 0-1 (0.1 for 10 %), got ${n}`)
  return n
}

/** A setting from the environment that is one of a few words, exactly (`REJECT` for `reject` turned the permissive mode on). */
function word<W extends string>(v: string | undefined, name: string, words: readonly W[]): W | undefined {
  if (v === undefined) return undefined
  if ((words as readonly string[]).includes(v)) return v as W
  throw new ConfigError(`${name}: expected ${words.join(' or ')}, got "${v.slice(0, 40)}"`)
}

/** `SWITCHYARD_CORS_ORIGINS` (comma-separated; `none` for none) over `server.cors_origins`; `*` when neither is set. */
function corsOrigins(fromEnv: string | undefined, fromFile: string[] | undefined): string[] {
  const raw = fromEnv !== undefined && fromEnv.trim() !== '' ? (fromEnv.trim() === 'none' ? [] : fromEnv.split(',').map((s) => s.trim()).filter(Boolean)) : fromFile ?? ['*']
  const problem = corsOriginsProblem(raw)
  if (problem) throw new ConfigError(`${fromEnv?.trim() ? 'SWITCHYARD_CORS_ORIGINS' : 'server.cors_origins'}: ${problem}`)
  return raw
}

/** `SWITCHYARD_TRUSTED_PROXIES` (comma-separated) over `server.trusted_proxies`: addresses and CIDR ranges, each checked (one that is neither would trust no one, without a word). */
function trustedProxies(fromEnv: string | undefined, fromFile: string[] | undefined): string[] {
  const env = str(fromEnv)
  const list = env !== undefined ? env.split(',').map((s) => s.trim()).filter(Boolean) : fromFile ?? []
  list.forEach((entry, i) => {
    const problem = proxyEntryProblem(entry)
    if (problem) throw new ConfigError(`${env !== undefined ? 'SWITCHYARD_TRUSTED_PROXIES' : `server.trusted_proxies[${i}]`}: ${problem}`)
  })
  return list
}

/** An http(s) URL with no query or fragment, without its trailing slash. */
function publicUrl(v: string | undefined): string | undefined {
  if (v === undefined) return undefined
  let u: URL
  try {
    u = new URL(v)
  } catch {
    throw new ConfigError(`server.public_url: expected an http or https URL, got "${v.slice(0, 80)}"`)
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash || u.username || u.password) {
    throw new ConfigError(`server.public_url: expected an http or https URL with no query, fragment or credentials, got "${v.slice(0, 80)}"`)
  }
  return (u.origin + u.pathname).replace(/\/+$/, '')
}

function positive(n: number | undefined, name: string): number | undefined {
  if (n === 0) throw new ConfigError(`${name}: expected a number above 0, got 0`)
  return n
}

/** Bun reads its fetch limit as a 16-bit count. */
function fetchLimit(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_FETCH_LIMIT) throw new ConfigError(`server.max_upstream_connections: expected an integer 1-${MAX_FETCH_LIMIT}, got ${n}`)
  return n
}

function tokenWorkers(n: number | undefined): number | undefined {
  if (n === undefined) return undefined
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new ConfigError(`server.token_workers: expected an integer 1-256, got ${n}`)
  return n
}

/**
 * Bodies read at once: by default room for eight at the body limit (256 MiB at its default); set
 * lower than the limit, a body near the limit could never be read.
 */
function bodyBudget(set: number | undefined, maxBodyBytes: number): number {
  if (set === undefined) return 8 * maxBodyBytes
  if (set < maxBodyBytes) throw new ConfigError(`limits.body_budget_bytes: ${set} is less than limits.max_body_bytes (${maxBodyBytes}), so a body near that limit could never be read; set it to at least ${maxBodyBytes}`)
  return set
}

function count(n: number, min: number): number {
  return Math.max(min, Math.floor(n))
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}

export function loadConfig({ flags = {}, env = process.env, cwd = process.cwd() }: ConfigInputs = {}): Config {
  const explicit = str(flags.config) ?? str(env.SWITCHYARD_CONFIG)
  const fallback = resolve(cwd, 'switchyard.yaml')
  const file = explicit ? resolve(cwd, explicit) : existsSync(fallback) ? fallback : null
  let f: ConfigFile = {}
  if (file) {
    if (!existsSync(file)) throw new ConfigError(`config file not found: ${file}`)
    f = parseConfigFile(readFileSync(file, 'utf8'), env, file)
  }

  const replay = replaySettings(f.replay, env, flags, cwd)
  const providers = resolveProviders(f.providers, env, { keyless: answersOffline(replay) })

  const port = num(str(flags.port) ?? env.PORT, 'port') ?? f.server?.port ?? 4141
  if (!Number.isInteger(port) || port > 65535) throw new ConfigError(`port: expected an integer 0-65535, got ${port}`)
  const level = (str(flags['log-level']) ?? str(env.SWITCHYARD_LOG_LEVEL) ?? f.log_level ?? 'info') as LogLevel
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(level)) throw new ConfigError(`log-level: unknown level "${level}"`)
  const logFormat = (str(flags['log-format']) ?? str(env.SWITCHYARD_LOG_FORMAT) ?? f.log_format ?? 'json') as LogFormat
  if (logFormat !== 'json' && logFormat !== 'text') throw new ConfigError(`log-format: expected json or text, got "${logFormat}"`)

  const maxBodyBytes = int(env.SWITCHYARD_MAX_BODY_BYTES, 'SWITCHYARD_MAX_BODY_BYTES', 1024) ?? f.limits?.max_body_bytes ?? 32 * MiB

  return {
    host: str(flags.host) ?? str(env.HOST) ?? f.server?.host ?? '127.0.0.1',
    port,
    dataDir: resolve(cwd, str(flags['data-dir']) ?? str(env.SWITCHYARD_DATA_DIR) ?? f.server?.data_dir ?? './data'),
    trustedProxies: trustedProxies(env.SWITCHYARD_TRUSTED_PROXIES, f.server?.trusted_proxies),
    publicUrl: publicUrl(str(env.SWITCHYARD_PUBLIC_URL) ?? str(f.server?.public_url)),
    corsOrigins: corsOrigins(env.SWITCHYARD_CORS_ORIGINS, f.server?.cors_origins),
    shutdownGraceMs: f.server?.shutdown_grace_ms ?? 10_000,
    maxUpstreamConnections: fetchLimit(num(env.SWITCHYARD_MAX_UPSTREAM_CONNECTIONS, 'SWITCHYARD_MAX_UPSTREAM_CONNECTIONS') ?? f.server?.max_upstream_connections ?? num(env[FETCH_LIMIT_VAR], FETCH_LIMIT_VAR) ?? DEFAULT_FETCH_LIMIT),
    tokenWorkers: tokenWorkers(num(env.SWITCHYARD_TOKEN_WORKERS, 'SWITCHYARD_TOKEN_WORKERS') ?? f.server?.token_workers),
    adminToken: str(env.SWITCHYARD_ADMIN_TOKEN) ?? str(f.server?.admin_token),
    bootstrapKey: str(env.SWITCHYARD_BOOTSTRAP_KEY),
    logLevel: level,
    logFormat,
    tracing: tracingSettings(f.tracing, env),
    providers,
    routing: resolveRouting(f.routing),
    limits: {
      keyRpm: int(env.SWITCHYARD_KEY_RPM, 'SWITCHYARD_KEY_RPM', 1) ?? f.limits?.key_rpm ?? 600,
      ipRpm: int(env.SWITCHYARD_IP_RPM, 'SWITCHYARD_IP_RPM', 1) ?? f.limits?.ip_rpm ?? 3000,
      keyBurstRps: int(env.SWITCHYARD_KEY_BURST_RPS, 'SWITCHYARD_KEY_BURST_RPS', 1) ?? f.limits?.key_burst_rps ?? 50,
      maxBodyBytes,
      bodyBudgetBytes: bodyBudget(int(env.SWITCHYARD_BODY_BUDGET_BYTES, 'SWITCHYARD_BODY_BUDGET_BYTES', 1024) ?? f.limits?.body_budget_bytes, maxBodyBytes),
      maxUploadBytes: int(env.SWITCHYARD_MAX_UPLOAD_BYTES, 'SWITCHYARD_MAX_UPLOAD_BYTES', 1024) ?? f.limits?.max_upload_bytes ?? 512 * MiB,
      keyFileBytes: int(env.SWITCHYARD_KEY_FILE_BYTES, 'SWITCHYARD_KEY_FILE_BYTES', 0) ?? f.limits?.key_file_bytes ?? null,
      bodyGraceS: positive(num(env.SWITCHYARD_BODY_GRACE_S, 'SWITCHYARD_BODY_GRACE_S'), 'SWITCHYARD_BODY_GRACE_S') ?? f.limits?.body_grace_s ?? 30,
      bodyMinBytesPerS: int(env.SWITCHYARD_BODY_MIN_BYTES_PER_S, 'SWITCHYARD_BODY_MIN_BYTES_PER_S', 1) ?? f.limits?.body_min_bytes_per_s ?? 16 * 1024,
      idleTimeoutS: Math.min(IDLE_MAX_S, int(env.SWITCHYARD_IDLE_TIMEOUT_S, 'SWITCHYARD_IDLE_TIMEOUT_S', 1) ?? f.limits?.idle_timeout_s ?? 30),
    },
    pricing: {
      discount: fraction(num(env.SWITCHYARD_DISCOUNT, 'SWITCHYARD_DISCOUNT'), 'SWITCHYARD_DISCOUNT') ?? f.pricing?.discount ?? 0,
      overrides: f.pricing?.overrides ?? {},
    },
    models: checkDeployments(f.models ?? [], providers),
    compat: { crossFamily: word(str(env.SWITCHYARD_CROSS_FAMILY), 'SWITCHYARD_CROSS_FAMILY', ['reject', 'translate']) ?? f.compat?.cross_family ?? 'reject' },
    generations: recordSettings(f.records, f.generations, env),
    cache: cacheSettings(f.cache),
    replay,
    responses: {
      maxThreadBytes: int(env.SWITCHYARD_MAX_THREAD_BYTES, 'SWITCHYARD_MAX_THREAD_BYTES', 1024) ?? f.responses?.max_thread_bytes ?? 32 * MiB,
      // OpenAI keeps a response 30 days
      retentionDays: num(env.SWITCHYARD_RESPONSES_RETENTION_DAYS, 'SWITCHYARD_RESPONSES_RETENTION_DAYS') ?? f.responses?.retention_days ?? 30,
      toolCallsStatus: word(str(env.SWITCHYARD_RESPONSES_TOOL_CALLS_STATUS), 'SWITCHYARD_RESPONSES_TOOL_CALLS_STATUS', ['requires_action', 'completed']) ?? f.responses?.tool_calls_status ?? 'requires_action',
    },
    metrics: {
      public: flag(env.SWITCHYARD_METRICS_PUBLIC, 'SWITCHYARD_METRICS_PUBLIC') ?? f.metrics?.public ?? false,
      perKey: flag(env.SWITCHYARD_METRICS_PER_KEY, 'SWITCHYARD_METRICS_PER_KEY') ?? f.metrics?.per_key ?? false,
    },
    media: {
      allowPrivateUrls: flag(env.SWITCHYARD_MEDIA_ALLOW_PRIVATE_URLS, 'SWITCHYARD_MEDIA_ALLOW_PRIVATE_URLS') ?? f.media?.allow_private_urls ?? false,
      maxBytes: int(env.SWITCHYARD_MEDIA_MAX_BYTES, 'SWITCHYARD_MEDIA_MAX_BYTES', 1) ?? f.media?.max_bytes ?? 20 * MiB,
      // what both upstreams take in one request (Anthropic's whole request is at most 32 MB)
      maxRequestBytes: int(env.SWITCHYARD_MEDIA_MAX_REQUEST_BYTES, 'SWITCHYARD_MEDIA_MAX_REQUEST_BYTES', 1) ?? f.media?.max_request_bytes ?? 32 * MiB,
      timeoutMs: int(env.SWITCHYARD_MEDIA_TIMEOUT_MS, 'SWITCHYARD_MEDIA_TIMEOUT_MS', 1) ?? f.media?.timeout_ms ?? 10_000,
    },
    batches: {
      workers: count(int(env.SWITCHYARD_BATCH_WORKERS, 'SWITCHYARD_BATCH_WORKERS', 1, 256) ?? f.batches?.workers ?? availableParallelism(), 1),
      maxConcurrency: count(int(env.SWITCHYARD_BATCH_MAX_CONCURRENCY, 'SWITCHYARD_BATCH_MAX_CONCURRENCY', 1, 10_000) ?? f.batches?.max_concurrency ?? 64, 1),
      maxInFlight: count(int(env.SWITCHYARD_BATCH_MAX_IN_FLIGHT, 'SWITCHYARD_BATCH_MAX_IN_FLIGHT', 1, 100_000) ?? f.batches?.max_in_flight ?? 2 * (num(env.SWITCHYARD_BATCH_MAX_CONCURRENCY, 'SWITCHYARD_BATCH_MAX_CONCURRENCY') ?? f.batches?.max_concurrency ?? 64), 1),
      maxRetries: count(int(env.SWITCHYARD_BATCH_MAX_RETRIES, 'SWITCHYARD_BATCH_MAX_RETRIES', 0, 20) ?? f.batches?.max_retries ?? 4, 0),
      maxItemsPerSecond: count(int(env.SWITCHYARD_BATCH_MAX_ITEMS_PER_SECOND, 'SWITCHYARD_BATCH_MAX_ITEMS_PER_SECOND', 0) ?? f.batches?.max_items_per_second ?? 1000, 0),
      maxItems: count(int(env.SWITCHYARD_BATCH_MAX_ITEMS, 'SWITCHYARD_BATCH_MAX_ITEMS', 1, 10_000_000) ?? f.batches?.max_items ?? 50_000, 1),
      leaseMs: count(int(env.SWITCHYARD_BATCH_LEASE_MS, 'SWITCHYARD_BATCH_LEASE_MS', 1000) ?? f.batches?.lease_ms ?? 10_000, 1_000),
      // Anthropic keeps a message batch's results 29 days
      retentionDays: num(env.SWITCHYARD_BATCH_RETENTION_DAYS, 'SWITCHYARD_BATCH_RETENTION_DAYS') ?? f.batches?.retention_days ?? 29,
    },
    database: {
      url: databaseUrl(str(env.SWITCHYARD_DATABASE_URL) ?? str(env.DATABASE_URL) ?? str(f.database?.url)),
      takeAhead: flag(env.SWITCHYARD_DATABASE_TAKE_AHEAD, 'SWITCHYARD_DATABASE_TAKE_AHEAD') ?? f.database?.take_ahead ?? true,
      poolSize: int(env.SWITCHYARD_DATABASE_POOL_SIZE, 'SWITCHYARD_DATABASE_POOL_SIZE', 1, 1000) ?? f.database?.pool_size ?? 10,
    },
    cluster: flag(env.SWITCHYARD_CLUSTER, 'SWITCHYARD_CLUSTER') ?? f.cluster ?? false,
    redis: redisSettings(f, env),
    s3: s3Settings(f, env),
    source: file,
  }
}

/** A database URL must be PostgreSQL's: anything else is a mistake to say at start, not a silent SQLite. */
function databaseUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined
  if (!/^postgres(ql)?:\/\//i.test(url)) throw new ConfigError('database.url: expected a postgres:// or postgresql:// URL (unset: SQLite in the data dir)')
  return url
}

function redisSettings(f: ConfigFile, env: Record<string, string | undefined>): RedisSettings | null {
  const url = str(env.SWITCHYARD_REDIS_URL) ?? str(env.REDIS_URL) ?? str(f.redis?.url)
  if (!url) return null
  if (!/^rediss?:\/\//.test(url)) throw new ConfigError(`redis.url: expected a redis:// or rediss:// URL`)
  const onError = str(env.SWITCHYARD_REDIS_ON_ERROR) ?? f.redis?.on_error ?? 'deny'
  if (onError !== 'deny' && onError !== 'allow') throw new ConfigError(`redis.on_error: expected "deny" or "allow", got "${onError}"`)
  return {
    url,
    onError,
    timeoutMs: count(num(env.SWITCHYARD_REDIS_TIMEOUT_MS, 'SWITCHYARD_REDIS_TIMEOUT_MS') ?? f.redis?.timeout_ms ?? 500, 50),
    prefix: str(env.SWITCHYARD_REDIS_PREFIX) ?? f.redis?.prefix ?? 'switchyard:',
    takeAhead: flag(env.SWITCHYARD_REDIS_TAKE_AHEAD, 'SWITCHYARD_REDIS_TAKE_AHEAD') ?? f.redis?.take_ahead ?? true,
  }
}

/** `blobs.s3`, or the names Bun's S3Client reads (`S3_*`, then `AWS_*`). A bucket turns it on. */
function s3Settings(f: ConfigFile, env: Record<string, string | undefined>): S3Settings | null {
  const c = f.blobs?.s3
  // the gateway's own S3_* variables over the file, as every other setting's; the ambient AWS_*
  // ones (a machine's region or credentials, set for other tools too) only where both are silent
  const pick = (field: string | undefined, name: string) => str(env[`S3_${name}`]) ?? str(field) ?? str(env[`AWS_${name}`])
  const bucket = pick(c?.bucket, 'BUCKET')
  if (!bucket) {
    if (c) throw new ConfigError('blobs.s3.bucket: required (or S3_BUCKET) when blobs.s3 is set')
    return null
  }
  const endpoint = pick(c?.endpoint, 'ENDPOINT')
  if (endpoint && !/^https?:\/\//.test(endpoint)) throw new ConfigError(`blobs.s3.endpoint: expected an http(s):// URL`)
  const redirect = flag(env.SWITCHYARD_S3_REDIRECT_DOWNLOADS, 'SWITCHYARD_S3_REDIRECT_DOWNLOADS') ?? c?.redirect_downloads ?? false
  return {
    bucket,
    endpoint,
    region: pick(c?.region, 'REGION'),
    accessKeyId: pick(c?.access_key_id, 'ACCESS_KEY_ID'),
    secretAccessKey: pick(c?.secret_access_key, 'SECRET_ACCESS_KEY'),
    sessionToken: pick(c?.session_token, 'SESSION_TOKEN'),
    prefix: (str(env.SWITCHYARD_S3_PREFIX) ?? c?.prefix ?? '').replace(/^\/+/, ''),
    redirectDownloads: redirect,
    presignTtlS: c?.presign_ttl_s ?? 300,
    // a custom endpoint is nearly always a self-hosted server that wants path-style URLs
    pathStyle: c?.path_style ?? endpoint !== undefined,
  }
}

/** Which store each shared concern uses, for the banner and `switchyard config`. */
export function storesOf(c: Config): Record<'database' | 'rate_limits' | 'credits' | 'change_bus' | 'blobs', string> {
  const redis = c.redis ? `redis ${maskUrl(c.redis.url)} (on_error: ${c.redis.onError})` : null
  // without Redis, a shared PostgreSQL database holds the credits and carries the change bus
  const pg = c.database.url ? `postgresql ${maskDatabaseUrl(c.database.url)}` : null
  return {
    database: pg ?? `sqlite ${join(c.dataDir, 'switchyard.db')}`,
    rate_limits: redis ?? 'memory (this instance only)',
    credits: redis ?? (pg ? `${pg} (reservations shared)` : 'memory + database (this instance only)'),
    change_bus: redis ? `${redis} pub/sub` : pg ? `${pg} LISTEN/NOTIFY` : 'memory (this instance; the data dir is polled every second)',
    blobs: c.s3
      ? `s3 bucket ${c.s3.bucket}${c.s3.endpoint ? ` at ${c.s3.endpoint}` : ''}${c.s3.redirectDownloads ? ' (downloads redirect to presigned URLs)' : ''}`
      : `disk ${c.dataDir}/blobs`,
  }
}

/** The effective config with every secret masked, for `switchyard config`. */
export function maskedConfig(c: Config): Record<string, unknown> {
  const mask = (s?: string) => (s ? `${s.slice(0, 3)}…(${s.length} chars)` : undefined)
  // a secret with no telling prefix shows nothing of itself
  const hidden = (s?: string) => (s ? `***(${s.length} chars)` : undefined)
  return {
    ...c,
    adminToken: mask(c.adminToken),
    bootstrapKey: mask(c.bootstrapKey),
    database: { ...c.database, url: c.database.url && maskDatabaseUrl(c.database.url) },
    providers: Object.fromEntries(
      Object.entries(c.providers).map(([id, p]) => [id, { ...p, baseUrl: maskUrl(p.baseUrl), apiKey: p.apiKey && maskKey(p.apiKey), apiKeys: p.apiKeys.map(maskKey) }]),
    ),
    redis: c.redis && { ...c.redis, url: maskUrl(c.redis.url) },
    tracing: maskedTracing(c.tracing),
    s3: c.s3 && { ...c.s3, accessKeyId: mask(c.s3.accessKeyId), secretAccessKey: hidden(c.s3.secretAccessKey), sessionToken: hidden(c.s3.sessionToken) },
    stores: storesOf(c),
  }
}
