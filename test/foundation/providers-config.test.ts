// Several providers per family in the config: the list form, the per-family shorthand and the
// OPENAI_*/ANTHROPIC_* variables, routing settings, errors that name their field, the catalog's
// deployments and fallbacks (configured and default), and `switchyard config`'s table.
import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCatalog } from '../../src/config/catalog.ts'
import { ConfigError, loadConfig } from '../../src/config/load.ts'
import { DEFAULT_ROUTING } from '../../src/config/providers.ts'
import { cleanup, runCli, tempDir } from '../helpers/server.ts'

const dir = tempDir()
afterAll(() => cleanup(dir))
let n = 0

/** The config a YAML file (and environment) gives. */
function load(yaml: string, env: Record<string, string> = {}) {
  const file = join(dir, `c${n++}.yaml`)
  writeFileSync(file, yaml)
  return loadConfig({ flags: { config: file }, env, cwd: dir })
}

/** The config is refused at start with a ConfigError whose message holds `message`. */
function expectRefused(yaml: string, env: Record<string, string>, message: string) {
  let err: unknown
  try {
    load(yaml, env)
  } catch (e) {
    err = e
  }
  expect(err).toBeInstanceOf(ConfigError)
  expect((err as Error).message).toContain(message)
}

/** The example, on local addresses. */
const SEVERAL = `
providers:
  - { id: openai-a, kind: openai, base_url: "http://127.0.0.1:9/v1/", api_keys: [sk-one-0000000000000001, sk-two-0000000000000002] }
  - { id: openai-b, kind: openai, base_url: "http://127.0.0.1:9/b/v1", api_key: "\${OPENAI_B_KEY}" }
  - { id: local, kind: openai-compatible, base_url: "http://proxyuser:pw-secret-in-url@127.0.0.1:8000/v1" }
  - { id: azure, kind: azure-openai, base_url: "https://name.openai.azure.com", api_key: az-key-00000000000000000, api_version: 2024-10-21 }
  - { id: claude-a, kind: anthropic, base_url: "http://127.0.0.1:9", api_key: sk-ant-000000000000000000, timeout_ms: 1000, max_retries: 0 }
models:
  - id: gpt-4o-mini
    family: openai
    deployments:
      - { provider: openai-a, weight: 3 }
      - { provider: openai-b, weight: 1, upstream_id: gpt-4o-mini-2024-07-18 }
    fallbacks: [claude-haiku-4-5]
  - { id: llama-3.1-8b, family: openai, deployments: [{ provider: local }], price: { input_mtok: 0, output_mtok: 0 } }
  - { id: gpt-4o-azure, family: openai, deployments: [{ provider: azure, upstream_id: my-4o, priority: 2 }] }
routing: { cooldown_s: 12.5, failures_to_cool: 5, retry_on: [429, 500, timeout], deadline_s: 90 }
`

describe('providers', () => {
  test('the list form: each provider by id in the order given, with its kind, pool and defaults', () => {
    const c = load(SEVERAL, { OPENAI_B_KEY: 'sk-b-from-env-00000000000' })
    expect(Object.keys(c.providers)).toEqual(['openai-a', 'openai-b', 'local', 'azure', 'claude-a'])
    expect(c.providers['openai-a']).toEqual({
      id: 'openai-a', name: 'openai-a', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1',
      apiKeys: ['sk-one-0000000000000001', 'sk-two-0000000000000002'], apiKey: 'sk-one-0000000000000001',
      responses: true, timeoutMs: 600_000, maxRetries: 2,
    })
    expect(c.providers['openai-b']!.apiKeys).toEqual(['sk-b-from-env-00000000000'])
    expect(c.providers.local).toMatchObject({ kind: 'openai-compatible', apiKeys: [], responses: false })
    expect(c.providers.local!.apiKey).toBeUndefined()
    expect(c.providers.azure).toMatchObject({ kind: 'azure-openai', apiVersion: '2024-10-21', apiKeys: ['az-key-00000000000000000'], responses: false })
    expect(c.providers['claude-a']).toMatchObject({ kind: 'anthropic', baseUrl: 'http://127.0.0.1:9', timeoutMs: 1000, maxRetries: 0 })
    expect(c.routing).toEqual({ cooldownMs: 12_500, failuresToCool: 5, retryOn: [429, 500, 'timeout'], deadlineMs: 90_000 })
    // azure's version defaults to the GA one; an openai provider may say its proxy has no /responses
    const d = load('providers:\n  - { id: az, kind: azure-openai, base_url: "https://x.openai.azure.com" }\n  - { id: p, kind: openai, responses: false }\n')
    expect(d.providers.az!.apiVersion).toBe('2024-10-21')
    expect(d.providers.p).toMatchObject({ baseUrl: 'https://api.openai.com/v1', responses: false })
  })

  test('the shorthand object form: providers openai and anthropic, each with a key or an address', () => {
    const c = load('providers:\n  openai: { api_keys: [k1-0000000000000000000, k2-0000000000000000000], base_url: "http://127.0.0.1:9/v1" }\n  anthropic: { max_retries: 0 }\n')
    expect(Object.keys(c.providers)).toEqual(['openai'])
    expect(c.providers.openai).toMatchObject({ id: 'openai', kind: 'openai', apiKeys: ['k1-0000000000000000000', 'k2-0000000000000000000'], responses: true })
    expect(c.routing).toEqual(DEFAULT_ROUTING)
  })

  test('OPENAI_* / ANTHROPIC_* make providers openai and anthropic, or fill what the file leaves unset', () => {
    const none = loadConfig({ env: {}, cwd: '/nonexistent' })
    expect(none.providers).toEqual({})
    const env = loadConfig({ env: { OPENAI_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1/' }, cwd: '/nonexistent' })
    expect(Object.keys(env.providers)).toEqual(['openai', 'anthropic'])
    expect(env.providers.anthropic).toMatchObject({ baseUrl: 'http://127.0.0.1:1', apiKeys: [] })
    // an anthropic address written as the AI SDK takes it (with /v1) is the same address: the
    // gateway appends /v1/messages itself
    for (const base of ['https://api.anthropic.com/v1', 'https://api.anthropic.com/v1/', 'https://api.anthropic.com']) {
      expect(loadConfig({ env: { ANTHROPIC_BASE_URL: base }, cwd: '/nonexistent' }).providers.anthropic!.baseUrl).toBe('https://api.anthropic.com')
    }
    expect(load('providers:\n  - { id: c, kind: anthropic, base_url: "http://127.0.0.1:9/proxy/v1" }\n').providers.c!.baseUrl).toBe('http://127.0.0.1:9/proxy')
    // an OpenAI address keeps its /v1, which is part of it there
    expect(loadConfig({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:2/v1/' }, cwd: '/nonexistent' }).providers.openai!.baseUrl).toBe('http://127.0.0.1:2/v1')
    // the file's own values come first, as they always did
    const file = load('providers:\n  openai: { api_key: from-file }\n', { OPENAI_API_KEY: 'from-env', OPENAI_BASE_URL: 'http://127.0.0.1:2/v1' })
    expect(file.providers.openai).toMatchObject({ apiKeys: ['from-file'], baseUrl: 'http://127.0.0.1:2/v1' })
    // with the list form: an `openai` entry takes the variables; an `anthropic` one is made from them
    const list = load('providers:\n  - { id: openai, kind: openai }\n  - { id: local, kind: openai-compatible, base_url: "http://127.0.0.1:3" }\n', { OPENAI_API_KEY: 'env-key', ANTHROPIC_API_KEY: 'ant-key' })
    expect(Object.keys(list.providers)).toEqual(['openai', 'local', 'anthropic'])
    expect(list.providers.openai!.apiKeys).toEqual(['env-key'])
    expect(list.providers.anthropic).toMatchObject({ kind: 'anthropic', apiKeys: ['ant-key'], baseUrl: 'https://api.anthropic.com' })
  })

  test('errors name the field', () => {
    const cases: [string, string][] = [
      ['providers:\n  - { id: a, kind: openai }\n  - { id: b, kind: nope }\n', 'providers[1].kind: expected one of "openai", "anthropic", "openai-compatible", "azure-openai"'],
      ['providers:\n  - { kind: openai }\n', 'providers[0].id: '],
      ['providers:\n  - { id: "9 lives", kind: openai }\n', 'providers[0].id: '],
      ['providers:\n  - { id: a, kind: openai, weight: 2 }\n', 'providers[0].weight: '],
      ['providers:\n  - { id: a, kind: openai }\n  - { id: a, kind: anthropic }\n', 'providers[1].id: "a" is given twice'],
      // names an object has of its own (toString, constructor) are no provider unless configured
      ['models:\n  - { id: m, family: openai, deployments: [{ provider: toString }] }\n', 'models[0].deployments[0].provider: unknown provider "toString"'],
      ['providers:\n  - { id: mock, kind: openai }\n', 'providers[0].id: "mock" is the built-in mock provider'],
      ['providers:\n  - { id: l, kind: openai-compatible }\n', 'providers[0].base_url: required for a provider of kind openai-compatible'],
      ['providers:\n  - { id: a, kind: openai, api_key: x, api_keys: [y] }\n', 'providers[0]: give api_key or api_keys, not both'],
      ['providers:\n  - { id: a, kind: openai, api_version: "2024-10-21" }\n', 'providers[0].api_version: only azure-openai providers'],
      ['providers:\n  - { id: a, kind: anthropic, responses: true }\n', 'providers[0].responses: '],
      ['providers:\n  openai: { api_key: x, kind: openai }\n', 'providers.openai.kind: '],
      ['providers: 3\n', 'providers: expected a list of providers'],
      ['providers:\n  - { id: a, kind: openai, base_url: "ftp://x" }\n', 'providers[0].base_url: '],
      ['routing: { retry_on: [500, later] }\n', 'routing.retry_on[1]: expected one of an integer 100-599, "timeout", "connect"'],
      ['routing: { failures_to_cool: 0 }\n', 'routing.failures_to_cool: '],
      // a key twice in one mapping: the parser would keep the second without a word
      ['limits: { key_rpm: 5 }\nlimits: { key_rpm: 7 }\n', 'line 2: "limits" is given twice in one mapping (line 1 has it too)'],
      ['providers:\n  - id: a\n    kind: openai\n    base_url: http://x\n    kind: anthropic\n', 'line 5: "kind" is given twice'],
      // a body's pace: no grace, or no pace, would cut every body or none
      ['limits: { body_grace_s: 0 }\n', 'limits.body_grace_s: '],
      ['limits: { body_min_bytes_per_s: 0 }\n', 'limits.body_min_bytes_per_s: '],
      // a budget of bodies read at once below the body limit would refuse a body near that limit for ever
      ['limits: { max_body_bytes: 4194304, body_budget_bytes: 2097152 }\n', 'limits.body_budget_bytes: 2097152 is less than limits.max_body_bytes (4194304)'],
      ['providers:\n  - { id: a, kind: openai }\nmodels:\n  - { id: m, family: openai, deployments: [{ provider: a }, { provider: x }] }\n', 'models[0].deployments[1].provider: unknown provider "x" (configured: "a", "mock")'],
      ['providers:\n  - { id: c, kind: anthropic }\nmodels:\n  - { id: m, family: openai, deployments: [{ provider: c }] }\n', 'models[0].deployments[0].provider: "c" is a provider of kind anthropic, which cannot serve m, a model of the openai family'],
      ['models:\n  - { id: m, family: openai, deployments: [{ provider: mock, weight: 0 }] }\n', 'models[0].deployments[0].weight: '],
      ['models:\n  - { id: m, family: openai, deployments: [{ provider: mock, weight: 1e308 }, { provider: mock, weight: 1e308 }] }\n', 'models[0].deployments[0].weight: '],
      ['models:\n  - { id: m, family: openai, deployments: [] }\n', 'models[0].deployments: '],
      // one name, one model: the second would replace the first, or be ignored, without a word
      ['models:\n  - { id: m, family: openai }\n  - { id: m, family: openai }\n', 'models[1].id: "m" is given twice (models[0].id has it too)'],
      ['models:\n  - { id: m, family: openai }\n  - { id: n, family: openai, aliases: [m] }\n', 'models[1].aliases[0]: "m" is given twice (models[0].id has it too)'],
      ['providers:\n  - { id: a, kind: openai }\nmodels:\n  - { id: m, family: openai, deployments: [{ provider: a }, { provider: a }] }\n', 'models[0].deployments[1]: provider "a" serving "m" is given twice'],
      ['providers:\n  - { id: a, kind: openai, api_key: "${NOT_SET_ANYWHERE}" }\n', 'providers[0].api_key: environment variable NOT_SET_ANYWHERE is not set'],
      // what a model entry says must be what the gateway does: a mock-… id is the mock's whatever
      // its deployments say, no surface reaches a model of none, an empty name names nothing
      ['providers:\n  - { id: local, kind: openai-compatible, base_url: "http://127.0.0.1:9/v1" }\nmodels:\n  - { id: mock-local, family: openai, deployments: [{ provider: mock }, { provider: local }] }\n', 'models[0].deployments[1]: mock-local is served by the built-in mock, as every mock-… id is; give the model another id to serve it from "local"'],
      ['models:\n  - { id: m, family: openai, surfaces: [] }\n', 'models[0].surfaces: '],
      ['models:\n  - { id: m, family: openai, aliases: [""] }\n', 'models[0].aliases[0]: '],
      ['models:\n  - { id: m, family: openai, upstream_id: "" }\n', 'models[0].upstream_id: '],
      ['models:\n  - { id: m, family: openai, context_window: 1000, max_output_tokens: 5000 }\n', 'models[0].max_output_tokens: 5000 is more than its context_window (1000)'],
    ]
    for (const [yaml, message] of cases) expectRefused(yaml, {}, message)
  })

  test('the environment is held to what the file is held to: ranges, a clear yes or no, known words', () => {
    const refused: [Record<string, string>, string][] = [
      // a typo of "reject" turned the permissive mode on; a discount of 10 (meaning 10 %) made everything free
      [{ SWITCHYARD_CROSS_FAMILY: 'REJECT' }, 'SWITCHYARD_CROSS_FAMILY: expected reject or translate'],
      [{ SWITCHYARD_DISCOUNT: '10' }, 'SWITCHYARD_DISCOUNT: expected a fraction 0-1'],
      [{ SWITCHYARD_KEY_RPM: '0' }, 'SWITCHYARD_KEY_RPM: expected an integer of at least 1'],
      [{ SWITCHYARD_KEY_RPM: '0.5' }, 'SWITCHYARD_KEY_RPM: expected an integer'],
      [{ SWITCHYARD_MAX_BODY_BYTES: '0' }, 'SWITCHYARD_MAX_BODY_BYTES: expected an integer of at least 1024'],
      [{ SWITCHYARD_BATCH_WORKERS: '100000' }, 'SWITCHYARD_BATCH_WORKERS: expected an integer 1-256'],
      [{ SWITCHYARD_MEDIA_TIMEOUT_MS: '0' }, 'SWITCHYARD_MEDIA_TIMEOUT_MS: '],
      [{ SWITCHYARD_MAX_THREAD_BYTES: '5' }, 'SWITCHYARD_MAX_THREAD_BYTES: '],
      [{ PORT: '0x50' }, 'port: expected a non-negative number'],
      [{ PORT: '1e3' }, 'port: expected a non-negative number'],
      [{ SWITCHYARD_CLUSTER: 'maybe' }, 'SWITCHYARD_CLUSTER: expected true or false'],
      [{ SWITCHYARD_METRICS_PUBLIC: 'ja' }, 'SWITCHYARD_METRICS_PUBLIC: expected true or false'],
      // an entry that is no address would trust no one, and a client's forwarded address never be read
      [{ SWITCHYARD_TRUSTED_PROXIES: '10.0.0.0/8, proxy.internal' }, 'SWITCHYARD_TRUSTED_PROXIES: expected an IP address or a CIDR range such as 10.0.0.0/8, got "proxy.internal"'],
      [{ SWITCHYARD_TRUSTED_PROXIES: '10.0.0.0/33' }, 'SWITCHYARD_TRUSTED_PROXIES: expected an IP address or a CIDR range'],
    ]
    for (const [env, message] of refused) expectRefused('', env, message)
    expectRefused('server: { trusted_proxies: ["10.0.0.1", "10.0.0.0/8/1"] }\n', {}, 'server.trusted_proxies[1]: expected an IP address or a CIDR range')
    // the environment over the file, as for every other setting
    expect(load('server: { trusted_proxies: ["10.0.0.1"] }\n', { SWITCHYARD_TRUSTED_PROXIES: '192.168.0.0/16, fd00::/8' }).trustedProxies).toEqual(['192.168.0.0/16', 'fd00::/8'])
    expect(() => load('', { SWITCHYARD_MAX_BODY_BYTES: '4096', SWITCHYARD_BODY_BUDGET_BYTES: '2048' })).toThrow(/limits\.body_budget_bytes: 2048 is less than limits\.max_body_bytes \(4096\)/)
    // by default, room for eight bodies at the limit
    expect(load('', { SWITCHYARD_MAX_BODY_BYTES: '4096' }).limits.bodyBudgetBytes).toBe(8 * 4096)
    expect(load('limits: { body_budget_bytes: 67108864 }\n', { SWITCHYARD_BODY_BUDGET_BYTES: '134217728' }).limits.bodyBudgetBytes).toBe(134217728)
    expect(load('', { SWITCHYARD_METRICS_PUBLIC: 'TRUE', SWITCHYARD_DATABASE_TAKE_AHEAD: 'no' })).toMatchObject({ metrics: { public: true }, database: { takeAhead: false } })
    expect(load('', { SWITCHYARD_CROSS_FAMILY: 'translate', SWITCHYARD_DISCOUNT: '0.1' })).toMatchObject({ compat: { crossFamily: 'translate' }, pricing: { discount: 0.1 } })
    // a grace no timer can hold would be none at all
    expect(() => load('server: { shutdown_grace_ms: 99999999999 }\n')).toThrow(/server\.shutdown_grace_ms/)
  })

  // `port: ${PORT}` and `key_rpm: "60"` are strings to the YAML parser: read as the numbers they
  // spell, and held to the same bounds; a string went through as a string, "0" and "-5" included
  test('numbers and on/off values written as strings are read as such, and held to their bounds', () => {
    const c = load('server: { port: "${P}" }\nlimits: { key_rpm: "60", body_grace_s: "2.5" }\nmetrics: { public: "true" }\nrecords: { max_backlog: "100" }\n', { P: '8080' })
    expect(c.port).toBe(8080)
    expect(c.limits.keyRpm).toBe(60)
    expect(c.limits.bodyGraceS).toBe(2.5)
    expect(c.metrics.public).toBe(true)
    // a list of statuses and words: the numbers read as numbers, the words as they are
    expect(load('routing: { retry_on: ["503", timeout, 429] }\n').routing.retryOn).toEqual([503, 'timeout', 429])
    for (const [yaml, message] of [
      ['limits: { key_rpm: "0" }\n', 'limits.key_rpm: Expected integer to be greater or equal to 1'],
      ['limits: { key_rpm: "-5" }\n', 'limits.key_rpm: '],
      ['limits: { key_rpm: "1.5" }\n', 'limits.key_rpm: Expected integer'],
      ['limits: { key_rpm: "0x50" }\n', 'limits.key_rpm: '],
      ['server: { port: "80 " }\nlimits: { max_body_bytes: "1e9" }\n', 'limits.max_body_bytes: '],
      ['metrics: { public: "ja" }\n', 'metrics.public: '],
    ] as const) expectRefused(yaml, {}, message)
  })

  // an alias that is another model's name would take that model's requests, the listing still
  // showing the model; a model's own dated ids, or ones its entry no longer has, are its to name
  test('an alias may not be a name of another model of the built-in catalog', () => {
    const catalog = (yaml: string) => () => buildCatalog(load(yaml))
    expect(catalog('models:\n  - { id: my-model, family: openai, aliases: [gpt-4o] }\n')).toThrow('models[0].aliases[0]: "gpt-4o" is a model of the built-in catalog, and an alias names only its own model; to serve gpt-4o from elsewhere, configure it as a model of its own')
    expect(catalog('models:\n  - { id: my-model, family: anthropic, aliases: [mine, claude-sonnet-4-5-20250929] }\n')).toThrow('models[0].aliases[1]: "claude-sonnet-4-5-20250929" is a dated id of the built-in catalog\'s claude-sonnet-4-5')
    expect(catalog('models:\n  - { id: gpt-4o, family: openai, aliases: [gpt-4o-2024-08-06, my-4o] }\n')).not.toThrow()
    expect(catalog('models:\n  - { id: gpt-4o, family: openai, aliases: [my-4o] }\n  - { id: old-4o, family: openai, aliases: [gpt-4o-2024-05-13] }\n')).not.toThrow()
  })

  // a new model given a price (or fallbacks) in config is called as the same id unconfigured is
  test('a configured model of a family\'s naming reasons as the id does unconfigured, unless it says', () => {
    const c = buildCatalog(load('models:\n  - { id: claude-opus-4-7, family: anthropic, price: { input_mtok: 5, output_mtok: 25 } }\n  - { id: gpt-6, family: openai, price: { input_mtok: 1, output_mtok: 1 } }\n  - { id: claude-3-5-haiku, family: anthropic, fallbacks: [claude-haiku-4-5] }\n  - { id: my-llama, family: openai }\n  - { id: gpt-7, family: openai, reasoning: false }\n'))
    const unconfigured = buildCatalog(load(''))
    for (const id of ['claude-opus-4-7', 'gpt-6']) {
      expect(c.resolve(id)).toMatchObject({ reasoning: true, reasoningSummaries: unconfigured.resolve(id)!.reasoningSummaries })
      expect(unconfigured.resolve(id)!.reasoning).toBe(true)
    }
    expect(c.resolve('claude-opus-4-7')!.adaptiveThinking).toBe('only')
    expect(c.resolve('claude-3-5-haiku')!.reasoning).toBe(false)
    expect(c.resolve('my-llama')!.reasoning).toBe(false)
    expect(c.resolve('gpt-7')!.reasoning).toBe(false)
    // a short name of a Claude or GPT model is that model: its reasoning and Claude's thinking form
    const short = buildCatalog(load('models:\n  - { id: sonnet, family: anthropic, upstream_id: claude-sonnet-4-5-20250929 }\n  - { id: my-opus, family: anthropic, deployments: [{ provider: mock, upstream_id: claude-opus-4-7 }] }\n  - { id: fast, family: openai, upstream_id: gpt-5-mini }\n  - { id: old, family: anthropic, upstream_id: claude-3-5-haiku-20241022 }\n'))
    expect(short.resolve('sonnet')).toMatchObject({ reasoning: true, contextWindow: 200_000, maxOutputTokens: 64_000 })
    expect(short.resolve('sonnet')!.adaptiveThinking).toBeUndefined()
    expect(short.resolve('my-opus')).toMatchObject({ reasoning: true, adaptiveThinking: 'only' })
    expect(short.resolve('fast')).toMatchObject({ reasoning: true, reasoningSummaries: true, contextWindow: 400_000, maxOutputTokens: 128_000 })
    // one the price library knows, the catalog not: its window
    expect(buildCatalog(load('models:\n  - { id: h3, family: anthropic, upstream_id: claude-3-haiku-20240307 }\n')).resolve('h3')!.contextWindow).toBe(200_000)
    expect(short.resolve('old')!.reasoning).toBe(false)
    // priced as the model its deployment sends, where its own id has no price
    const usage = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
    expect(short.cost(short.resolve('my-opus')!, usage)).toBe(short.cost(short.resolve('claude-opus-4-7')!, usage))
    expect(short.cost(short.resolve('my-opus')!, usage)).toBeGreaterThan(0)
    expect(short.cost(short.resolve('sonnet')!, usage)).toBe(short.cost(short.resolve('claude-sonnet-4-5')!, usage))
  })

  test('a price override must name a model a request can name', () => {
    const catalog = (yaml: string) => () => buildCatalog(load(yaml))
    expect(catalog('pricing:\n  overrides:\n    gpt4o: { input_mtok: 1, output_mtok: 1 }\n')).toThrow('pricing.overrides.gpt4o: unknown model "gpt4o"')
    expect(catalog('models:\n  - { id: gpt-4o-eu, family: openai, deployments: [{ provider: mock, upstream_id: my-4o }] }\npricing:\n  overrides:\n    my-4o: { input_mtok: 1, output_mtok: 1 }\n')).toThrow('pricing.overrides.my-4o: "my-4o" is a deployment\'s upstream id, and its requests are priced under their model\'s id: give the price as pricing.overrides.gpt-4o-eu')
    // the catalog's, a dated id, a configured model, an alias, a mock, one of a family's naming the catalog does not list yet
    // prices are looked up by a model's id, not by an alias the config gives it
    expect(catalog('models:\n  - { id: local-llama, family: openai, aliases: [ll] }\npricing:\n  overrides:\n    ll: { input_mtok: 1, output_mtok: 1 }\n')).toThrow('pricing.overrides.ll: "ll" is an alias of local-llama, whose requests are priced under its id: give the price as pricing.overrides.local-llama')
    // the catalog's, a dated id, a configured model and the id it goes upstream as, a mock, one of a family's naming the catalog does not list yet, an image model
    expect(catalog('models:\n  - { id: local-llama, family: openai, aliases: [ll] }\n  - { id: tuned, family: openai, upstream_id: "ft:gpt-4o-mini:acme::abc" }\npricing:\n  overrides:\n    gpt-4o: { input_mtok: 1, output_mtok: 1 }\n    gpt-4o-2024-08-06: { input_mtok: 1, output_mtok: 1 }\n    local-llama: { input_mtok: 1, output_mtok: 1 }\n    "ft:gpt-4o-mini:acme::abc": { input_mtok: 1, output_mtok: 1 }\n    mock-x: { input_mtok: 1, output_mtok: 1 }\n    gpt-7-preview: { input_mtok: 1, output_mtok: 1 }\n    gpt-image-1: { input_mtok: 1, output_mtok: 1 }\n')).not.toThrow()
  })

  test('a dated id of the built-in catalog goes upstream as named; an alias the config gives as its model does', () => {
    const c = buildCatalog(load('models:\n  - { id: gpt-4o, family: openai, upstream_id: gpt-4o-2024-11-20, aliases: [gpt-4o-2024-08-06, my-4o] }\n  - { id: tuned, family: openai, upstream_id: "ft:gpt-4o-mini:acme::abc", aliases: [tuned-latest] }\n  - { id: plain, family: openai, aliases: [p] }\n'))
    const sent = (id: string) => [c.resolve(id)!.id, c.resolve(id)!.upstreamId, ...c.resolve(id)!.deployments.map((d) => d.upstreamId)]
    expect(sent('gpt-4o')).toEqual(['gpt-4o', 'gpt-4o-2024-11-20', 'gpt-4o-2024-11-20'])
    expect(sent('gpt-4o-2024-08-06')).toEqual(['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-2024-08-06'])
    expect(sent('my-4o')).toEqual(['gpt-4o', 'gpt-4o-2024-11-20', 'gpt-4o-2024-11-20'])
    expect(sent('tuned-latest')).toEqual(['tuned', 'ft:gpt-4o-mini:acme::abc', 'ft:gpt-4o-mini:acme::abc'])
    expect(sent('p')).toEqual(['plain', 'plain', 'plain'])
    // the built-in table's own, untouched
    expect(sent('gpt-4o-mini-2024-07-18')).toEqual(['gpt-4o-mini', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini-2024-07-18'])
  })

  test('a fallback must be a model the catalog serves, and not the model itself', () => {
    const bad = (fallbacks: string) => () => buildCatalog(load(`models:\n  - { id: my-model, family: openai, fallbacks: ${fallbacks} }\n`))
    expect(bad('[gpt-4o, no-such-model]')).toThrow('models[0].fallbacks[1]: unknown model "no-such-model"')
    expect(bad('[my-model]')).toThrow('models[0].fallbacks[0]: my-model cannot fall back to itself')
    expect(bad('[gpt-4o, claude-haiku-4-5-20251001, mock-claude, gpt-4-turbo]')).not.toThrow()
  })
})

describe('catalog deployments and fallbacks', () => {
  const one = (provider: string, upstreamId: string) => ({ provider, upstreamId, weight: 1, priority: 1 })

  test('configured deployments and fallbacks; aliases send their own id where no upstream id is given', () => {
    const c = buildCatalog(load(SEVERAL, { OPENAI_B_KEY: 'k' }))
    const mini = c.resolve('gpt-4o-mini')!
    expect(mini.deployments).toEqual([
      { provider: 'openai-a', upstreamId: 'gpt-4o-mini', weight: 3, priority: 1 },
      { provider: 'openai-b', upstreamId: 'gpt-4o-mini-2024-07-18', weight: 1, priority: 1 },
    ])
    expect(mini.fallbacks).toEqual(['claude-haiku-4-5'])
    expect(mini.provider).toBe('openai')
    const alias = c.resolve('gpt-4o-mini-2024-07-18')!
    expect(alias.id).toBe('gpt-4o-mini')
    expect(alias.deployments.map((d) => d.upstreamId)).toEqual(['gpt-4o-mini-2024-07-18', 'gpt-4o-mini-2024-07-18'])
    expect(alias.fallbacks).toEqual(['claude-haiku-4-5'])
    expect(c.resolve('llama-3.1-8b')).toMatchObject({ provider: 'openai-compatible', deployments: [one('local', 'llama-3.1-8b')], fallbacks: [] })
    expect(c.resolve('gpt-4o-azure')!.deployments).toEqual([{ provider: 'azure', upstreamId: 'my-4o', weight: 1, priority: 2 }])
  })

  test('every other model gets one deployment: the first provider of its family\'s own kind, else the mock', () => {
    const c = buildCatalog(load(SEVERAL, { OPENAI_B_KEY: 'k' }))
    expect(c.resolve('gpt-4o')).toMatchObject({ provider: 'openai', deployments: [one('openai-a', 'gpt-4o')], fallbacks: [] })
    expect(c.resolve('gpt-4o-2024-08-06')!.deployments).toEqual([one('openai-a', 'gpt-4o-2024-08-06')])
    expect(c.resolve('claude-haiku-4-5')).toMatchObject({ provider: 'anthropic', deployments: [one('claude-a', 'claude-haiku-4-5')] })
    // known to the price library only; unlisted; mock-* always the mock
    expect(c.resolve('gpt-4-turbo')!.deployments).toEqual([one('openai-a', 'gpt-4-turbo')])
    expect(c.resolve('gpt-9.9-preview')).toMatchObject({ unlisted: true, deployments: [one('openai-a', 'gpt-9.9-preview')], fallbacks: [] })
    expect(c.resolve('mock-anything')).toMatchObject({ provider: 'mock', deployments: [one('mock', 'mock-anything')], fallbacks: [] })
    expect(c.resolve('mock-gpt')!.deployments).toEqual([one('mock', 'mock-gpt')])
    // neither openai-compatible nor azure-openai is the family's own kind
    const compatOnly = buildCatalog(load('providers:\n  - { id: local, kind: openai-compatible, base_url: "http://127.0.0.1:8000/v1" }\n'))
    expect(compatOnly.resolve('gpt-4o')).toMatchObject({ provider: 'mock', deployments: [one('mock', 'gpt-4o')] })
    expect(compatOnly.resolve('claude-sonnet-4-5')!.deployments).toEqual([one('mock', 'claude-sonnet-4-5')])
    // the shorthand: providers openai / anthropic by their family's name
    const short = buildCatalog(loadConfig({ env: { OPENAI_API_KEY: 'k' }, cwd: '/nonexistent' }))
    expect(short.resolve('gpt-5')!.deployments).toEqual([one('openai', 'gpt-5')])
    expect(short.resolve('claude-opus-4-5')!.deployments).toEqual([one('mock', 'claude-opus-4-5')])
  })
})

test('switchyard config prints the providers with their keys masked and each configured model\'s deployments', async () => {
  const file = join(dir, 'cli.yaml')
  writeFileSync(file, SEVERAL)
  const r = await runCli(['config', '--config', file], { OPENAI_B_KEY: 'sk-b-secret-from-env-0000' })
  expect(r.code).toBe(0)
  const cfg = JSON.parse(r.stdout)
  expect(Object.keys(cfg.providers)).toEqual(['openai-a', 'openai-b', 'local', 'azure', 'claude-a'])
  expect(cfg.providers['openai-a']).toMatchObject({ kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeys: ['…0001 (23 chars)', '…0002 (23 chars)'] })
  expect(cfg.providers.azure).toMatchObject({ kind: 'azure-openai', apiVersion: '2024-10-21' })
  // a password written into a base URL is a secret too
  expect(cfg.providers.local.baseUrl).toBe('http://proxyuser:***@127.0.0.1:8000/v1')
  for (const secret of ['sk-one-0000000000000001', 'sk-two-0000000000000002', 'sk-b-secret-from-env-0000', 'az-key-00000000000000000', 'sk-ant-000000000000000000', 'pw-secret-in-url']) expect(r.stdout).not.toContain(secret)
  expect(cfg.routing).toEqual({ cooldownMs: 12_500, failuresToCool: 5, retryOn: [429, 500, 'timeout'], deadlineMs: 90_000 })
  expect(cfg.deployments.models['gpt-4o-mini']).toEqual({
    deployments: [
      { provider: 'openai-a', upstreamId: 'gpt-4o-mini', weight: 3, priority: 1 },
      { provider: 'openai-b', upstreamId: 'gpt-4o-mini-2024-07-18', weight: 1, priority: 1 },
    ],
    fallbacks: ['claude-haiku-4-5'],
  })
  expect(cfg.deployments.familyDefaults).toEqual({ openai: 'openai-a', anthropic: 'claude-a' })
  // a fallback the catalog does not know stops it, naming the field
  writeFileSync(file, 'models:\n  - { id: m, family: openai, fallbacks: [nowhere-model] }\n')
  const bad = await runCli(['config', '--config', file])
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain('models[0].fallbacks[0]: unknown model "nowhere-model"')
})
