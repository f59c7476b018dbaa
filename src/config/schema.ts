// The config file's shape, validated at start with TypeBox. Field names are snake_case
// as users write them in YAML; `load.ts` turns the result into the typed Config.
import { t, type Static } from 'elysia'
import { Int } from '../lib/int.ts'
import { CacheSchema } from './cache.ts'
import { ReplaySchema } from './replay.ts'
import { RecordsSchema } from './records.ts'

/**
 * A model's prices, in place of the price library's: all of them, so input and output are
 * required (a part would leave the rest to guess). The others default to the input price
 * (cache reads, writes, audio in), the write price (an hour's writes), the output price (audio
 * out), or nothing (web searches, USD per thousand).
 */
const Price = t.Object(
  {
    input_mtok: t.Number({ minimum: 0 }),
    output_mtok: t.Number({ minimum: 0 }),
    cache_read_mtok: t.Optional(t.Number({ minimum: 0 })),
    cache_write_mtok: t.Optional(t.Number({ minimum: 0 })),
    cache_write_1h_mtok: t.Optional(t.Number({ minimum: 0 })),
    input_audio_mtok: t.Optional(t.Number({ minimum: 0 })),
    output_audio_mtok: t.Optional(t.Number({ minimum: 0 })),
    web_searches_kcount: t.Optional(t.Number({ minimum: 0 })),
    file_searches_kcount: t.Optional(t.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
)

/** What every provider entry may say about reaching its upstream. */
const reach = {
  api_key: t.Optional(t.String()),
  /** A key pool, used round-robin per call. */
  api_keys: t.Optional(t.Array(t.String())),
  base_url: t.Optional(t.String({ pattern: '^https?://' })),
  timeout_ms: t.Optional(Int({ minimum: 1 })),
  max_retries: t.Optional(Int({ minimum: 0, maximum: 10 })),
}

/** The shorthand `providers: { openai: {...}, anthropic: {...} }`: one provider per family, named after it. */
const FamilyProvider = t.Object(reach, { additionalProperties: false })
export const FamilyProviders = t.Object({ openai: t.Optional(FamilyProvider), anthropic: t.Optional(FamilyProvider) }, { additionalProperties: false })

/** One entry of `providers: [...]`. */
const ProviderEntry = t.Object(
  {
    id: t.String({ pattern: '^[A-Za-z][A-Za-z0-9._-]{0,63}$' }),
    kind: t.Union([t.Literal('openai'), t.Literal('anthropic'), t.Literal('openai-compatible'), t.Literal('azure-openai')]),
    ...reach,
    /** azure-openai: the `api-version` query parameter. */
    api_version: t.Optional(t.String({ minLength: 1 })),
    /** The upstream serves the Responses API too (openai: yes unless false; others: no unless true). */
    responses: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
)
export const ProviderList = t.Array(ProviderEntry)

const Deployment = t.Object(
  {
    provider: t.String({ minLength: 1 }),
    // a million at most: two of 1e308 made the weighted draw's sum Infinity, and one of them never served
    weight: t.Optional(t.Number({ exclusiveMinimum: 0, maximum: 1_000_000 })),
    priority: t.Optional(Int({ minimum: 1 })),
    upstream_id: t.Optional(t.String({ minLength: 1 })),
  },
  { additionalProperties: false },
)

const RetryOn = t.Union([Int({ minimum: 100, maximum: 599 }), t.Literal('timeout'), t.Literal('connect')])

const Surface = t.Union([t.Literal('chat'), t.Literal('responses'), t.Literal('messages')])

const Model = t.Object(
  {
    id: t.String({ minLength: 1 }),
    family: t.Union([t.Literal('openai'), t.Literal('anthropic')]),
    aliases: t.Optional(t.Array(t.String({ minLength: 1 }))),
    upstream_id: t.Optional(t.String({ minLength: 1 })),
    context_window: t.Optional(Int({ minimum: 1 })),
    max_output_tokens: t.Optional(Int({ minimum: 1 })),
    reasoning: t.Optional(t.Boolean()),
    reasoning_summaries: t.Optional(t.Boolean()),
    /** false: the model takes no images (no files, no tools), so it is no fallback for a request that sends them. */
    images: t.Optional(t.Boolean()),
    files: t.Optional(t.Boolean()),
    tools: t.Optional(t.Boolean()),
    // none at all would list a model no request could reach
    surfaces: t.Optional(t.Array(Surface, { minItems: 1 })),
    price: t.Optional(Price),
    /** Where the model is served; unset: its family's provider (or the mock). */
    deployments: t.Optional(t.Array(Deployment, { minItems: 1 })),
    /** Models tried, in order, when every deployment of this one failed. */
    fallbacks: t.Optional(t.Array(t.String({ minLength: 1 }))),
  },
  { additionalProperties: false },
)

export const ConfigFileSchema = t.Object(
  {
    server: t.Optional(
      t.Object(
        {
          host: t.Optional(t.String()),
          port: t.Optional(Int({ minimum: 0, maximum: 65535 })),
          data_dir: t.Optional(t.String()),
          trusted_proxies: t.Optional(t.Array(t.String())),
          /** The gateway's URL as clients reach it (e.g. https://llm.example.com behind a proxy that ends TLS): the origin of the URLs it hands out. */
          public_url: t.Optional(t.String({ minLength: 1 })),
          /** Origins whose pages may call the API routes from a browser: ["*"] (the default), a list of origins, or [] for none. */
          cors_origins: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 300 }), { maxItems: 1000 })),
          shutdown_grace_ms: t.Optional(Int({ minimum: 0, maximum: 86_400_000 })),
          max_upstream_connections: t.Optional(Int({ minimum: 1, maximum: 65535 })),
          token_workers: t.Optional(Int({ minimum: 1, maximum: 256 })),
          admin_token: t.Optional(t.String()),
        },
        { additionalProperties: false },
      ),
    ),
    database: t.Optional(
      t.Object(
        {
          url: t.Optional(t.String()),
          /** Without Redis: a busy funded key far from its balance has its next holds made while it is served (default true). */
          take_ahead: t.Optional(t.Boolean()),
          /** The request thread's PostgreSQL connections at most (default 10; a batch worker opens at most 4 of its own, never more than this). */
          pool_size: t.Optional(Int({ minimum: 1, maximum: 1000 })),
        },
        { additionalProperties: false },
      ),
    ),
    cluster: t.Optional(t.Boolean()),
    log_level: t.Optional(t.Union([t.Literal('debug'), t.Literal('info'), t.Literal('warn'), t.Literal('error'), t.Literal('silent')])),
    log_format: t.Optional(t.Union([t.Literal('json'), t.Literal('text')])),
    tracing: t.Optional(t.Object({ capture_content: t.Optional(t.Boolean()) }, { additionalProperties: false })),
    providers: t.Optional(t.Union([ProviderList, FamilyProviders])),
    routing: t.Optional(
      t.Object(
        {
          cooldown_s: t.Optional(t.Number({ minimum: 0 })),
          failures_to_cool: t.Optional(Int({ minimum: 1 })),
          retry_on: t.Optional(t.Array(RetryOn)),
          deadline_s: t.Optional(t.Number({ exclusiveMinimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** The exact response cache (config/cache.ts). */
    cache: t.Optional(CacheSchema),
    /** Cassettes: record upstream exchanges, or answer from them (config/replay.ts). */
    replay: t.Optional(ReplaySchema),
    /** `tool_calls_status: completed`: a reply that calls tools says `completed`, as OpenAI's does (the openai SDK's tool runner and parse helper need it), not the spec's `requires_action`. */
    responses: t.Optional(t.Object({ max_thread_bytes: t.Optional(Int({ minimum: 1024 })), retention_days: t.Optional(t.Number({ minimum: 0 })), tool_calls_status: t.Optional(t.Union([t.Literal('requires_action'), t.Literal('completed')], { errorMessage: 'expected "requires_action" or "completed"' })) }, { additionalProperties: false })),
    /** GET /metrics: `public` needs no token (a private network's port); `per_key` adds key id and account labels. */
    metrics: t.Optional(t.Object({ public: t.Optional(t.Boolean()), per_key: t.Optional(t.Boolean()) }, { additionalProperties: false })),
    limits: t.Optional(
      t.Object(
        {
          key_rpm: t.Optional(Int({ minimum: 1 })),
          ip_rpm: t.Optional(Int({ minimum: 1 })),
          key_burst_rps: t.Optional(Int({ minimum: 1 })),
          max_body_bytes: t.Optional(Int({ minimum: 1024 })),
          /** The bytes of JSON bodies read and parsed at once, all requests together (at least max_body_bytes). */
          body_budget_bytes: t.Optional(Int({ minimum: 1024 })),
          max_upload_bytes: t.Optional(Int({ minimum: 1024 })),
          key_file_bytes: t.Optional(Int({ minimum: 0 })),
          body_grace_s: t.Optional(t.Number({ exclusiveMinimum: 0 })),
          body_min_bytes_per_s: t.Optional(Int({ minimum: 1 })),
          idle_timeout_s: t.Optional(Int({ minimum: 1, maximum: 255 })),
        },
        { additionalProperties: false },
      ),
    ),
    pricing: t.Optional(
      t.Object(
        {
          discount: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
          overrides: t.Optional(t.Record(t.String(), Price)),
        },
        { additionalProperties: false },
      ),
    ),
    models: t.Optional(t.Array(Model)),
    compat: t.Optional(
      t.Object(
        { cross_family: t.Optional(t.Union([t.Literal('reject'), t.Literal('translate')])) },
        { additionalProperties: false },
      ),
    ),
    records: t.Optional(RecordsSchema),
    /** The older name of `records`. */
    generations: t.Optional(RecordsSchema),
    batches: t.Optional(
      t.Object(
        {
          /** Bun Workers that parse, validate, translate and run batch items (default: the CPU count). */
          workers: t.Optional(Int({ minimum: 1, maximum: 256 })),
          /** Items of one batch in flight at once: the cap on `settings.concurrency`, and its default. */
          max_concurrency: t.Optional(Int({ minimum: 1, maximum: 10_000 })),
          max_in_flight: t.Optional(Int({ minimum: 1, maximum: 100_000 })),
          /** Further attempts of an item whose upstream answered 429 or 5xx, with backoff. */
          max_retries: t.Optional(Int({ minimum: 0, maximum: 20 })),
          /** Items started per second across all batches (large batches may be throttled), so that batch work never crowds out interactive traffic; 0: no limit. */
          max_items_per_second: t.Optional(Int({ minimum: 0 })),
          /** Instances sharing a database: how long an item one claimed stays its own without renewal (ms). */
          lease_ms: t.Optional(Int({ minimum: 1000 })),
          /** Items per batch (50,000 is the usual limit of the official APIs; higher on request). */
          max_items: t.Optional(Int({ minimum: 1, maximum: 10_000_000 })),
          /** Days an ended batch's items (request bodies and results) are kept; its row, counts and output files stay (0: until it is deleted). */
          retention_days: t.Optional(t.Number({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
    redis: t.Optional(
      t.Object(
        {
          /** `redis://` or `rediss://`: shared rate limits, credit reservations and the change bus. */
          url: t.Optional(t.String({ pattern: '^rediss?://' })),
          /** Redis down: `deny` answers 503 to requests that need it; `allow` serves on per-instance limits. */
          on_error: t.Optional(t.Union([t.Literal('deny'), t.Literal('allow')])),
          /** How long a command may wait for a connection or an answer before the request is refused. */
          timeout_ms: t.Optional(Int({ minimum: 50, maximum: 60_000 })),
          /** Every Redis key and channel starts with this (one Redis for several deployments). */
          prefix: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
          /** A busy key far from its limits and balance: its next request's slot and hold taken while the current one is served (default true). */
          take_ahead: t.Optional(t.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    blobs: t.Optional(
      t.Object(
        {
          s3: t.Optional(
            t.Object(
              {
                bucket: t.Optional(t.String({ minLength: 1 })),
                endpoint: t.Optional(t.String({ pattern: '^https?://' })),
                region: t.Optional(t.String()),
                access_key_id: t.Optional(t.String()),
                secret_access_key: t.Optional(t.String()),
                session_token: t.Optional(t.String()),
                /** Object names start with this (a bucket shared with other things). */
                prefix: t.Optional(t.String()),
                /** Downloads answer with a redirect to a short-lived presigned URL instead of streaming through the gateway. */
                redirect_downloads: t.Optional(t.Boolean()),
                /** How long a presigned download URL stays valid. */
                presign_ttl_s: t.Optional(Int({ minimum: 1, maximum: 604_800 })),
                /** Path-style URLs (`endpoint/bucket/key`), as most self-hosted S3 servers need. */
                path_style: t.Optional(t.Boolean()),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    media: t.Optional(
      t.Object(
        {
          allow_private_urls: t.Optional(t.Boolean()),
          max_bytes: t.Optional(Int({ minimum: 1 })),
          max_request_bytes: t.Optional(Int({ minimum: 1 })),
          timeout_ms: t.Optional(Int({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

export type ConfigFile = Static<typeof ConfigFileSchema>
export type ModelEntry = Static<typeof Model>
export type PriceEntry = Static<typeof Price>
export type ProviderEntry = Static<typeof ProviderEntry>
export type FamilyProviderEntry = Static<typeof FamilyProvider>
export type DeploymentEntry = Static<typeof Deployment>
