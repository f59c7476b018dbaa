// The config's providers resolved into one table keyed by id, in the order given: the list form
// (`providers: [{id, kind, …}]`), or the shorthand (`providers: {openai: {…}, anthropic: {…}}`)
// whose entries take their family's name as id. `OPENAI_*` / `ANTHROPIC_*` variables fill in what
// the file leaves unset for the providers `openai` / `anthropic`, or make them. Also `routing`,
// and the check of each model's deployments against the table. Errors name the field.
import { ConfigError } from './errors.ts'
import { CONFIG_KINDS, DEFAULT_ROUTING, familyOfKind, MOCK_ID, type ProviderConfig, type RetryOn, type RoutingSettings } from './providers.ts'
import type { ConfigFile, FamilyProviderEntry, ModelEntry, ProviderEntry } from './schema.ts'

type Env = Record<string, string | undefined>
type Kind = (typeof CONFIG_KINDS)[number]

const DEFAULT_BASE: Partial<Record<Kind, string>> = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com' }
/** Azure OpenAI's generally available API version when the config names none. */
export const AZURE_API_VERSION = '2024-10-21'
const DEFAULT_TIMEOUT_MS = 600_000
const DEFAULT_MAX_RETRIES = 2

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)

/** The pool of one entry: `api_keys`, or `api_key`, never both; empty strings (an unset `${VAR:-}`) dropped. */
function keysOf(e: FamilyProviderEntry, where: string): string[] {
  if (e.api_key !== undefined && e.api_keys !== undefined) throw new ConfigError(`${where}: give api_key or api_keys, not both`)
  const keys = (e.api_keys ?? [e.api_key]).filter((k): k is string => str(k) !== undefined)
  return [...new Set(keys)]
}

/**
 * The address calls are made under. Anthropic's own SDK takes it without `/v1` (it appends
 * `/v1/messages`), the AI SDK's provider and OpenAI's convention with it: an anthropic address
 * that ends in `/v1` is taken as the AI SDK's, so the gateway does not call `/v1/v1/messages`.
 */
const baseOf = (kind: Kind, url: string): string => {
  const bare = url.replace(/\/+$/, '')
  return kind === 'anthropic' ? bare.replace(/\/v1$/, '') : bare
}

function provider(id: string, kind: Kind, e: ProviderEntry | FamilyProviderEntry, keys: string[], base: string | undefined, where: string): ProviderConfig {
  const url = base ?? DEFAULT_BASE[kind]
  if (!url) throw new ConfigError(`${where}.base_url: required for a provider of kind ${kind}`)
  const listed = 'kind' in e ? e : undefined
  if (listed?.api_version !== undefined && kind !== 'azure-openai') throw new ConfigError(`${where}.api_version: only azure-openai providers take an api-version`)
  if (listed?.responses !== undefined && kind === 'anthropic') throw new ConfigError(`${where}.responses: an anthropic provider serves messages; responses applies to the OpenAI kinds`)
  return {
    id,
    name: id,
    kind,
    baseUrl: baseOf(kind, url),
    apiKeys: keys,
    apiKey: keys[0],
    ...(kind === 'azure-openai' ? { apiVersion: listed?.api_version ?? AZURE_API_VERSION } : {}),
    responses: listed?.responses ?? kind === 'openai',
    timeoutMs: e.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    maxRetries: e.max_retries ?? DEFAULT_MAX_RETRIES,
  }
}

/** `OPENAI_API_KEY` / `OPENAI_BASE_URL` (and ANTHROPIC_…) for the provider of that id. */
function fromEnv(family: 'openai' | 'anthropic', env: Env) {
  const prefix = family.toUpperCase()
  return { key: str(env[`${prefix}_API_KEY`]), base: str(env[`${prefix}_BASE_URL`]) }
}

/** `keyless`: cassettes answer for the upstreams, so a family's provider stands without a key or an address. */
export function resolveProviders(file: ConfigFile['providers'], env: Env, opts: { keyless?: boolean } = {}): Record<string, ProviderConfig> {
  const out: Record<string, ProviderConfig> = {}
  const list = Array.isArray(file) ? file : undefined
  const where = (i: number) => `providers[${i}]`
  list?.forEach((e, i) => {
    if (e.id === MOCK_ID) throw new ConfigError(`${where(i)}.id: "${MOCK_ID}" is the built-in mock provider's id`)
    if (Object.hasOwn(out, e.id)) throw new ConfigError(`${where(i)}.id: "${e.id}" is given twice`)
    const env_ = e.id === 'openai' || e.id === 'anthropic' ? fromEnv(e.id, env) : { key: undefined, base: undefined }
    let keys = keysOf(e, where(i))
    if (keys.length === 0 && env_.key) keys = [env_.key]
    out[e.id] = provider(e.id, e.kind, e, keys, str(e.base_url) ?? env_.base, where(i))
  })
  for (const family of ['openai', 'anthropic'] as const) {
    if (Object.hasOwn(out, family)) continue
    const e: FamilyProviderEntry = (file && !Array.isArray(file) ? file[family] : undefined) ?? {}
    const env_ = fromEnv(family, env)
    let keys = keysOf(e, `providers.${family}`)
    if (keys.length === 0 && env_.key) keys = [env_.key]
    const base = str(e.base_url) ?? env_.base
    // the shorthand names an upstream only once it has a key or an address (or cassettes answer for it)
    if (keys.length === 0 && !base && !opts.keyless) continue
    out[family] = provider(family, family, e, keys, base, `providers.${family}`)
  }
  return out
}

export function resolveRouting(r: ConfigFile['routing']): RoutingSettings {
  return {
    cooldownMs: r?.cooldown_s !== undefined ? Math.round(r.cooldown_s * 1000) : DEFAULT_ROUTING.cooldownMs,
    failuresToCool: r?.failures_to_cool ?? DEFAULT_ROUTING.failuresToCool,
    retryOn: r?.retry_on ? [...new Set<RetryOn>(r.retry_on)] : [...DEFAULT_ROUTING.retryOn],
    deadlineMs: r?.deadline_s !== undefined ? Math.round(r.deadline_s * 1000) : DEFAULT_ROUTING.deadlineMs,
  }
}

/**
 * Each model's deployments name a configured provider (or `mock`) whose wire carries the
 * model's family. Returns the models as given.
 */
export function checkDeployments(models: ModelEntry[], providers: Record<string, ProviderConfig>): ModelEntry[] {
  // one name, one model: a second entry of an id (or an alias another entry has) would replace
  // the first, or be ignored, without a word
  const named = new Map<string, string>()
  const name = (n: string, field: string) => {
    const first = named.get(n)
    if (first !== undefined) throw new ConfigError(`${field}: "${n}" is given twice (${first} has it too)`)
    named.set(n, field)
  }
  models.forEach((m, i) => {
    name(m.id, `models[${i}].id`)
    m.aliases?.forEach((a, j) => name(a, `models[${i}].aliases[${j}]`))
    // a mock-… id is always the built-in mock's: deployments elsewhere would be ignored without a word
    const elsewhere = m.id.startsWith('mock-') ? m.deployments?.findIndex((d) => d.provider !== MOCK_ID) ?? -1 : -1
    if (elsewhere >= 0) throw new ConfigError(`models[${i}].deployments[${elsewhere}]: ${m.id} is served by the built-in mock, as every mock-… id is; give the model another id to serve it from "${m.deployments![elsewhere]!.provider}"`)
    if (m.max_output_tokens !== undefined && m.context_window !== undefined && m.max_output_tokens > m.context_window) {
      throw new ConfigError(`models[${i}].max_output_tokens: ${m.max_output_tokens} is more than its context_window (${m.context_window}), which holds the output too`)
    }
    const served = new Set<string>()
    m.deployments?.forEach((d, j) => {
      const where = `${d.provider}/${d.upstream_id ?? m.upstream_id ?? m.id}`
      if (served.has(where)) throw new ConfigError(`models[${i}].deployments[${j}]: provider "${d.provider}" serving "${d.upstream_id ?? m.upstream_id ?? m.id}" is given twice`)
      served.add(where)
    })
    m.deployments?.forEach((d, j) => {
      const field = `models[${i}].deployments[${j}].provider`
      if (d.provider === MOCK_ID) return
      const p = Object.hasOwn(providers, d.provider) ? providers[d.provider] : undefined
      if (!p) {
        const known = [...Object.keys(providers), MOCK_ID].map((k) => `"${k}"`).join(', ')
        throw new ConfigError(`${field}: unknown provider "${d.provider}" (configured: ${known})`)
      }
      const family = familyOfKind(p.kind)
      if (family !== m.family) throw new ConfigError(`${field}: "${p.id}" is a provider of kind ${p.kind}, which cannot serve ${m.id}, a model of the ${m.family} family`)
    })
  })
  return models
}
