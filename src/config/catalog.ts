// Model resolution and prices. The built-in table (models.ts) plus config `models`, with
// context windows and prices from @pydantic/genai-prices; config can override prices.
import { calcPrice } from './price-library.ts'
import type { Family, ImageGenUsage, Usage } from '../ir/types.ts'
import { ConfigError } from './errors.ts'
import { defaultProviderId, kindOf, MOCK_ID, type Deployment, type ProviderConfig, type ProviderKind } from './providers.ts'
import type { Config } from './load.ts'
import { MODELS, type DeploymentSpec, type ModelRow, type Surface } from './models.ts'
import { checkDeployments } from './upstreams.ts'
import { premiumFactor } from './claude-premiums.ts'
import { tierFactor } from './service-tiers.ts'
import type { PriceEntry } from './schema.ts'
import { imageLibraryUsage, imageModelId, KNOWN_IMAGE_MODELS } from './image-prices.ts'
import { containersUsd } from '../billing/containers.ts'

export type { Surface } from './models.ts'

export interface CatalogModel {
  /** Canonical id (what lists show and records store). */
  id: string
  aliases: string[]
  family: Family
  /** The kind of the first deployment's provider (`mock` when the mock serves it). */
  provider: ProviderKind
  /** The model a configured one under the operator's own name is sent as, where only its deployments name it: priced as that one when its own ids are not. */
  pricedAs?: string
  /** Model id sent upstream: the model's (config `upstream_id`, else its id); a dated id of the built-in table as the client named it. */
  upstreamId: string
  /**
   * Where it is served, at least one: configured ones, else its family's provider (the first of
   * the family's own kind), else the mock; `mock-*` ids always the mock. A deployment without an
   * upstream id of its own sends `upstreamId`.
   */
  deployments: Deployment[]
  /** Models (ids as configured, each resolvable) tried in order when every deployment failed. */
  fallbacks: string[]
  contextWindow: number
  /**
   * The most output tokens a request may ask for, when known (the built-in table, config).
   * Undefined for models known only from the price library, which has no output caps: the
   * upstream (or the mock) decides, and the gateway invents none.
   */
  maxOutputTokens: number | undefined
  reasoning: boolean
  reasoningSummaries: boolean
  /**
   * How a Claude model thinks when asked to: `adaptive` alone (Opus 4.7 and later, the Claude 5
   * models: a budget is refused), `preferred` where both forms work (the 4.6 models), or
   * absent: a budget (`enabled`), the only form of the models before.
   */
  adaptiveThinking?: 'only' | 'preferred'
  surfaces: Surface[]
  /** Epoch seconds, for list shapes. */
  created: number
  /**
   * Named as the family names its models but known neither to the table nor to the price
   * library (a model newer than both, such as a client's new default): served by the family's
   * provider, which decides whether it exists; unpriced; never listed or kept.
   */
  unlisted?: true
}

const ALL_SURFACES: Surface[] = ['chat', 'responses', 'messages']
/** An unlisted model's window is unknown: requests are bounded by the upstream, not by a guess. */
const UNLISTED_CONTEXT = 10_000_000
/** Ids of the families' own naming; an unlisted one must look like an id, nothing more. */
const FAMILY_ID = /^(claude-|gpt-|o\d|chatgpt-|codex-)[A-Za-z0-9._:-]*$/
/** The chat models of a reasoning generation (`gpt-5-chat-latest`) take no reasoning effort. */
const reasons = (id: string, family: Family) => family === 'anthropic' || (/^(o\d|gpt-([5-9]|\d\d))/.test(id) && !/-chat(-|$)/.test(id))
const summarises = (id: string) => /^(o\d|gpt-([5-9]|\d\d))/.test(id)

/** `claude-<name>-<major>[-<minor>]…`: a minor of one or two digits (not a date's eight). */
const CLAUDE_VERSION = /^claude-[a-z]+-(\d{1,2})(?:[-.](\d{1,2}))?(?![0-9])/

/** The thinking form of a Claude model, from its id's version (catalog `adaptiveThinking`). */
export function adaptiveThinkingOf(id: string): CatalogModel['adaptiveThinking'] {
  const m = CLAUDE_VERSION.exec(id)
  if (!m) return undefined
  const version = Number(m[1]) + Number(m[2] ?? 0) / 100
  return version >= 4.07 ? 'only' : version >= 4.06 ? 'preferred' : undefined
}

/** The field as an entry holds it: set only where there is one. */
const thinkingForm = (upstreamId: string) => {
  const form = adaptiveThinkingOf(upstreamId)
  return form ? { adaptiveThinking: form } : {}
}

/**
 * max_tokens sent to a Claude upstream (which requires one) when neither the request nor the
 * catalog gives one: what every current Claude model accepts.
 */
export const UNKNOWN_CAP_MAX_TOKENS = 32_000

/** The max_tokens a request that gave none is sent with, where the wire requires one. */
export const defaultMaxTokens = (m: CatalogModel): number => m.maxOutputTokens ?? UNKNOWN_CAP_MAX_TOKENS

/**
 * The most output a request may ask for on this model, or undefined when the gateway does not
 * know (the upstream decides). Mock models stand in for no real model: only the context window
 * bounds them, so clients that pick max_tokens by model name (Claude Code sends 32k–128k) work.
 */
export function outputLimit(m: CatalogModel): { limit: number; what: string } | undefined {
  if (m.maxOutputTokens !== undefined && !m.id.startsWith('mock-')) return { limit: m.maxOutputTokens, what: 'maximum output' }
  // a mock-* id, or a model of unknown cap the mock serves
  if (m.provider === 'mock' || m.id.startsWith('mock-')) return { limit: m.contextWindow, what: 'context window' }
  return undefined
}
const CREATED = 1_735_689_600 // 2025-01-01, a stable value for list shapes

/** What a model is priced by. */
type Priced = Pick<CatalogModel, 'id' | 'family' | 'upstreamId' | 'pricedAs'>

/** genai-prices knows a model → its context window; unknown → undefined. */
function libraryInfo(id: string, family: Family) {
  const r = calcPrice({ input_tokens: 0, output_tokens: 0 }, id, { providerId: family })
  return r ? { contextWindow: r.model.context_window } : undefined
}

/** `mock-*` ids always go to the mock provider; `mock-claude…` speaks the Anthropic family rules. */
function mockFamily(id: string): Family {
  return id.includes('claude') ? 'anthropic' : 'openai'
}

/** Every name of the built-in table, its ids and their dated aliases → the id of the model it names. */
const BUILTIN_NAMES = new Map(MODELS.flatMap((r) => [r.id, ...(r.aliases ?? [])].map((n) => [n, r.id] as const)))

/** Ids resolved on the way and kept for the next request (and their prices): a client naming new ids each time must not grow memory. */
const LEARNED = 2048

export class Catalog {
  private byId = new Map<string, CatalogModel>()
  private canonical: CatalogModel[] = []
  /** Where each id stands in `canonical`: a config's later row for an id takes its place, found without a scan. */
  private placeOf = new Map<string, number>()
  /** Configured prices, as rates: derived once, read for every record. */
  private overrides: Map<string, Rates>
  private discount: number
  private rates = new Map<string, { hour: number; rates: Rates | 'tiered' | null }>()
  private learned = new Map<string, CatalogModel>()

  constructor(rows: ModelRow[], private readonly providers: Record<string, ProviderConfig>, pricing: Config['pricing'], configPrices: Record<string, PriceEntry> = {}) {
    this.overrides = new Map(Object.entries({ ...configPrices, ...pricing.overrides }).map(([id, p]) => [id, overrideRates(p)]))
    this.discount = pricing.discount
    for (const row of rows) this.add(row)
  }

  /** Deployments of a catalog entry sent upstream as `upstreamId` (aliases send their own id). */
  private placed(specs: DeploymentSpec[], upstreamId: string): Pick<CatalogModel, 'deployments' | 'provider'> {
    const deployments = specs.map((d) => ({ provider: d.provider, upstreamId: d.upstreamId ?? upstreamId, weight: d.weight, priority: d.priority }))
    // deployments name configured providers (checked at load)
    return { deployments, provider: kindOf(this.providers, deployments[0]!.provider)! }
  }

  private specsOf(row: Pick<ModelRow, 'id' | 'family' | 'deployments'>): DeploymentSpec[] {
    if (row.id.startsWith('mock-')) return [{ provider: MOCK_ID, weight: 1, priority: 1 }]
    return row.deployments ?? [{ provider: defaultProviderId(this.providers, row.family), weight: 1, priority: 1 }]
  }

  private add(row: ModelRow) {
    const m = this.entry(row)
    const existing = this.placeOf.get(m.id)
    if (existing !== undefined) this.canonical[existing] = m
    else this.placeOf.set(m.id, this.canonical.push(m) - 1)
    this.byId.set(m.id, m)
    const specs = this.specsOf(row)
    for (const a of m.aliases) {
      // a dated id of the built-in table goes upstream as the client named it; an alias the
      // config gives is another name of the model, sent as the model is (its upstream_id)
      const upstreamId = BUILTIN_NAMES.get(a) === m.id ? a : m.upstreamId
      this.byId.set(a, { ...m, upstreamId, ...this.placed(specs, upstreamId) })
    }
  }

  /** An id met on the way (a `mock-` one, one the price library knows): kept for the next request, never listed, and at most LEARNED of them. */
  private learn(m: CatalogModel): CatalogModel {
    if (this.learned.size >= LEARNED) this.learned.delete(this.learned.keys().next().value!)
    this.learned.set(m.id, m)
    return m
  }

  private entry(row: ModelRow): CatalogModel {
    const specs = this.specsOf(row)
    const upstreamId = row.upstreamId ?? row.id
    const m: CatalogModel = {
      id: row.id,
      aliases: row.aliases ?? [],
      family: row.family,
      ...this.placed(specs, upstreamId),
      fallbacks: row.fallbacks ?? [],
      upstreamId,
      ...(row.pricedAs !== undefined ? { pricedAs: row.pricedAs } : {}),
      contextWindow: row.contextWindow,
      maxOutputTokens: row.maxOutputTokens,
      reasoning: row.reasoning ?? false,
      reasoningSummaries: row.summaries ?? false,
      // the form of the Claude model it is sent as (a deployment's upstream id where only those name it)
      ...(row.family === 'anthropic' ? thinkingForm(row.upstreamId ?? specs.find((d) => d.upstreamId !== undefined)?.upstreamId ?? row.id) : {}),
      surfaces: row.surfaces ?? ALL_SURFACES,
      created: CREATED,
    }
    return m
  }

  /** The catalog entry for an id or alias; ids the price library knows are accepted too. */
  resolve(id: string): CatalogModel | undefined {
    const hit = this.byId.get(id) ?? this.learned.get(id)
    if (hit) return hit
    if (typeof id !== 'string' || id.length === 0 || id.length > 256) return undefined
    if (id.startsWith('mock-')) {
      const family = mockFamily(id)
      const base = this.byId.get(family === 'anthropic' ? 'mock-claude' : 'mock-gpt')!
      return this.learn({ ...base, id, upstreamId: id, aliases: [], ...this.placed(this.specsOf({ id, family }), id) })
    }
    if (!FAMILY_ID.test(id)) return undefined
    const family: Family = id.startsWith('claude-') ? 'anthropic' : 'openai'
    const info = libraryInfo(id, family)
    if (!info) return this.unlisted(id, family)
    // the library knows context windows, not output caps: none is invented here. The library
    // matches loosely (any `claude-sonnet-4-5-…`), so what a client names is not listed for others
    return this.learn(
      this.entry({
        id,
        family,
        contextWindow: info.contextWindow ?? 128_000,
        maxOutputTokens: undefined,
        reasoning: reasons(id, family),
        summaries: summarises(id),
      }),
    )
  }

  /** A new entry each time: a client naming random ids must not grow the catalog. */
  private unlisted(id: string, family: Family): CatalogModel {
    return {
      id,
      aliases: [],
      family,
      ...this.placed(this.specsOf({ id, family }), id),
      fallbacks: [],
      upstreamId: id,
      contextWindow: UNLISTED_CONTEXT,
      maxOutputTokens: undefined,
      reasoning: reasons(id, family),
      reasoningSummaries: summarises(id),
      ...(family === 'anthropic' ? thinkingForm(id) : {}),
      surfaces: ALL_SURFACES,
      created: CREATED,
      unlisted: true,
    }
  }

  /**
   * The price library evaluates its generic unit machinery on every call (~15 µs, a fifth
   * of the gateway's CPU under load). Without tiers, cost is linear in the four counts,
   * so per-token rates are derived from the library once per model per hour (prices can
   * change on a date) and applied directly; tiered models still go through the library.
   */
  private libraryCost(model: Priced, u: Usage, at: Date): number | null {
    // an unlisted model has no price, and its id must not grow the cache; nor has a mock one,
    // whatever the library's loose match would make of it (`mock-claude-v2x` as Claude 2)
    if (model.id.startsWith('mock-') || (!this.byId.has(model.id) && this.resolve(model.id)?.unlisted)) return null
    const key = `${model.family}:${model.upstreamId}:${model.id}`
    const hour = Math.floor(at.getTime() / 3_600_000)
    let entry = this.rates.get(key)
    if (!entry || entry.hour !== hour) {
      entry = { hour, rates: deriveRates(model, at) }
      // ids clients name are many: derived again rather than kept past a bound
      if (this.rates.size >= LEARNED) this.rates.clear()
      this.rates.set(key, entry)
    }
    const r = entry.rates
    if (r === null) return null
    if (r === 'tiered') return libraryPrice(model, libraryUsage(u), at)?.total_price ?? null
    return linearCost(r, u)
  }

  list(): CatalogModel[] {
    return this.canonical
  }

  /**
   * USD cost of one request at catalog prices × (1 − discount), or null when the model
   * has no known price (recorded as unpriced, never as $0).
   */
  cost(model: Priced, u: Usage, at: Date = new Date()): number | null {
    let total = this.standardCost(model, u, at)
    if (total === null || !Number.isFinite(total)) return null
    // a tier priced apart (OpenAI's flex, priority; Anthropic's fast mode, US-only inference)
    // scales the tokens' price, not a search's; a tier of no known price (ultrafast) leaves the
    // request unpriced, never priced as standard
    const tier = tierFactor(model.upstreamId, u.serviceTier)
    if (tier === null) return null
    const factor = tier * (model.family === 'anthropic' ? premiumFactor(model.upstreamId, u) : 1)
    const searched = u.webSearches || u.fileSearches
    if (factor !== 1) total += (factor - 1) * (searched ? (this.standardCost(model, { ...u, webSearches: 0, fileSearches: 0 }, at) ?? total) : total)
    // the image tool's tokens, at its image model's rates
    if (u.imageGen) total += this.imageCost(u.imageGen, at)
    // new code-interpreter containers, a session each at their memory tier's price
    if (u.containers) total += containersUsd(u.containers)
    // 15 significant digits: a sum of products' float noise (0.006255999999999999) is not a price
    return Number((total * (1 - this.discount)).toPrecision(15))
  }

  /**
   * The image generation tool's tokens at its image model's rates (the operator's for that id,
   * else the library's); a model of no known price, or none named, at the dearest known one's.
   */
  private imageCost(g: ImageGenUsage, at: Date): number {
    const priceAs = (id: string): number | null => {
      const o = this.overrides.get(id)
      if (o) return linearCost(o, { inputTokens: Math.max(0, g.inputTokens - g.cachedTokens), cacheReadTokens: g.cachedTokens, cacheWriteTokens: 0, outputTokens: g.outputTokens })
      return libraryPrice({ id, family: 'openai', upstreamId: id }, imageLibraryUsage(g), at)?.total_price ?? null
    }
    const own = g.model !== undefined && (this.overrides.has(g.model) || imageModelId(g.model)) ? priceAs(g.model) : null
    return own ?? Math.max(0, ...KNOWN_IMAGE_MODELS.map((id) => priceAs(id) ?? 0))
  }

  /** At the standard tier's prices: the operator's own, or the library's. */
  private standardCost(model: Priced, u: Usage, at: Date): number | null {
    const o = this.overrides.get(model.id) ?? this.overrides.get(model.upstreamId)
    return o ? linearCost(o, u) : this.libraryCost(model, u, at)
  }
}

/** USD per token of each bucket (audio and an hour's writes in place of their part of input, output and writes), per search, plus any per-request fee. */
interface Rates {
  perRequest: number
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  cacheWrite1h: number
  inputAudio: number
  outputAudio: number
  webSearch: number
  fileSearch: number
}

function overrideRates(o: PriceEntry): Rates {
  const M = 1e6
  const write = o.cache_write_mtok ?? o.input_mtok
  return {
    perRequest: 0,
    input: o.input_mtok / M,
    output: o.output_mtok / M,
    cacheRead: (o.cache_read_mtok ?? o.input_mtok) / M,
    cacheWrite: write / M,
    cacheWrite1h: (o.cache_write_1h_mtok ?? write) / M,
    inputAudio: (o.input_audio_mtok ?? o.input_mtok) / M,
    outputAudio: (o.output_audio_mtok ?? o.output_mtok) / M,
    webSearch: (o.web_searches_kcount ?? 0) / 1000,
    fileSearch: (o.file_searches_kcount ?? 0) / 1000,
  }
}

/** Cost is linear in the counts: each bucket at its rate, the parts priced apart taken out of the bucket they belong to. */
function linearCost(r: Rates, u: Usage): number {
  const hour = Math.min(u.cacheWrite1hTokens ?? 0, u.cacheWriteTokens)
  const audioIn = Math.min(u.inputAudioTokens ?? 0, u.inputTokens)
  const audioOut = Math.min(u.outputAudioTokens ?? 0, u.outputTokens)
  return (
    r.perRequest +
    (u.inputTokens - audioIn) * r.input +
    audioIn * r.inputAudio +
    (u.outputTokens - audioOut) * r.output +
    audioOut * r.outputAudio +
    u.cacheReadTokens * r.cacheRead +
    (u.cacheWriteTokens - hour) * r.cacheWrite +
    hour * r.cacheWrite1h +
    (u.webSearches ?? 0) * r.webSearch +
    (u.fileSearches ?? 0) * r.fileSearch
  )
}

/** The library counts cache tokens as part of input_tokens, audio as part of input and output, an hour's writes as part of the writes. */
function libraryUsage(u: Usage) {
  const usage: Record<string, number> = {
    input_tokens: u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens,
    cache_read_tokens: u.cacheReadTokens,
    cache_write_tokens: u.cacheWriteTokens,
    output_tokens: u.outputTokens,
  }
  if (u.cacheWrite1hTokens) usage.cache_write_1h_tokens = Math.min(u.cacheWrite1hTokens, u.cacheWriteTokens)
  if (u.inputAudioTokens) usage.input_audio_tokens = Math.min(u.inputAudioTokens, u.inputTokens)
  if (u.outputAudioTokens) usage.output_audio_tokens = Math.min(u.outputAudioTokens, u.outputTokens)
  if (u.webSearches) usage.web_searches = u.webSearches
  // the library's name for a search of stored files
  if (u.fileSearches) usage.storage_searches = u.fileSearches
  return usage
}

function libraryPrice(model: Priced, usage: Record<string, number>, at: Date) {
  return (
    calcPrice(usage, model.upstreamId, { providerId: model.family, timestamp: at }) ??
    calcPrice(usage, model.id, { providerId: model.family, timestamp: at }) ??
    (model.pricedAs !== undefined ? calcPrice(usage, model.pricedAs, { providerId: model.family, timestamp: at }) : undefined)
  )
}

function deriveRates(model: Priced, at: Date): Rates | 'tiered' | null {
  const base = libraryPrice(model, { input_tokens: 0, output_tokens: 0 }, at)
  if (!base) return null
  if (Object.values(base.model_price).some((v) => typeof v === 'object' && v !== null)) return 'tiered'
  const M = 1_000_000
  const none: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
  const per = (u: Partial<Usage>) => ((libraryPrice(model, libraryUsage({ ...none, ...u }), at)?.total_price ?? 0) - base.total_price) / M
  return {
    perRequest: base.total_price,
    input: per({ inputTokens: M }),
    output: per({ outputTokens: M }),
    cacheRead: per({ cacheReadTokens: M }),
    cacheWrite: per({ cacheWriteTokens: M }),
    cacheWrite1h: per({ cacheWriteTokens: M, cacheWrite1hTokens: M }),
    inputAudio: per({ inputTokens: M, inputAudioTokens: M }),
    outputAudio: per({ outputTokens: M, outputAudioTokens: M }),
    webSearch: per({ webSearches: M }),
    fileSearch: per({ fileSearches: M }),
  }
}

export function buildCatalog(config: Pick<Config, 'providers' | 'models' | 'pricing'>): Catalog {
  checkDeployments(config.models, config.providers)
  const rows: ModelRow[] = [...MODELS]
  const prices: Record<string, PriceEntry> = {}
  for (const m of config.models) {
    const builtin = MODELS.find((r) => r.id === m.id)
    // what the gateway would take of the model it is sent as, unconfigured (resolve): a price given
    // is not a model changed, nor is a short name of a Claude or GPT model
    const sentAs = m.upstream_id ?? m.deployments?.find((d) => d.upstream_id !== undefined)?.upstream_id ?? m.id
    const known = builtin ?? MODELS.find((r) => r.id === BUILTIN_NAMES.get(sentAs))
    const inferred = known ?? (FAMILY_ID.test(sentAs) ? { reasoning: reasons(sentAs, m.family), summaries: summarises(sentAs) } : undefined)
    rows.push({
      id: m.id,
      family: m.family,
      // (the dated ids of a built-in model are its own, never a short name's)
      aliases: m.aliases ?? builtin?.aliases,
      upstreamId: m.upstream_id,
      ...(m.upstream_id === undefined && sentAs !== m.id ? { pricedAs: sentAs } : {}),
      contextWindow: m.context_window ?? known?.contextWindow ?? libraryInfo(sentAs, m.family)?.contextWindow ?? libraryInfo(m.id, m.family)?.contextWindow ?? 128_000,
      maxOutputTokens: m.max_output_tokens ?? known?.maxOutputTokens,
      reasoning: m.reasoning ?? inferred?.reasoning,
      summaries: m.reasoning_summaries ?? inferred?.summaries,
      surfaces: m.surfaces ?? known?.surfaces,
      deployments: m.deployments?.map((d) => ({ provider: d.provider, upstreamId: d.upstream_id, weight: d.weight ?? 1, priority: d.priority ?? 1 })),
      fallbacks: m.fallbacks,
    })
    if (m.price) prices[m.id] = m.price
  }
  checkAliases(config.models)
  const catalog = new Catalog(rows, config.providers, config.pricing, prices)
  checkFallbacks(catalog, config.models)
  checkOverrides(catalog, config)
  return catalog
}

/**
 * A configured alias names its own model only. One that is a name of another model of the
 * built-in table (its id, or a dated id it still has) would take that model's requests without a
 * word, while the listing still showed the model. (Names given twice within the config: checkDeployments.)
 */
function checkAliases(models: Config['models']): void {
  const configured = new Map(models.map((m) => [m.id, m]))
  const taken = new Map<string, string>()
  for (const r of MODELS) for (const n of [r.id, ...(configured.get(r.id)?.aliases ?? r.aliases ?? [])]) taken.set(n, r.id)
  models.forEach((m, i) =>
    m.aliases?.forEach((a, j) => {
      const owner = taken.get(a)
      if (owner === undefined || owner === m.id) return
      const what = owner === a ? 'a model of the built-in catalog' : `a dated id of the built-in catalog's ${owner}`
      throw new ConfigError(`models[${i}].aliases[${j}]: "${a}" is ${what}, and an alias names only its own model; to serve ${a} from elsewhere, configure it as a model of its own ({ id: ${a}, … } with its upstream_id or deployments)`)
    }),
  )
}

/** Every fallback names a model the catalog serves, other than the model itself. */
function checkFallbacks(catalog: Catalog, models: Config['models']): void {
  models.forEach((m, i) =>
    m.fallbacks?.forEach((id, j) => {
      const field = `models[${i}].fallbacks[${j}]`
      const target = catalog.resolve(id)
      if (!target) throw new ConfigError(`${field}: unknown model "${id}"`)
      if (target.id === m.id) throw new ConfigError(`${field}: ${m.id} cannot fall back to itself`)
    }),
  )
}

/**
 * A price override names a model a request can name, as its prices are looked up: by the model's
 * id, or the id it goes upstream as (a dated id, a configured upstream_id). One for no such
 * model (a typo), or under an alias the config gives, would price nothing, without a word.
 */
function checkOverrides(catalog: Catalog, config: Pick<Config, 'models' | 'pricing'>): void {
  const sentAs = new Set(config.models.flatMap((m) => m.upstream_id ?? []))
  // a deployment's own upstream id (an Azure deployment's name): its model's id is what prices it
  const deployed = new Map(config.models.flatMap((m) => (m.deployments ?? []).flatMap((d) => (d.upstream_id === undefined ? [] : [[d.upstream_id, m.id] as const]))))
  for (const id of Object.keys(config.pricing.overrides)) {
    if (sentAs.has(id)) continue
    const m = catalog.resolve(id)
    const field = `pricing.overrides.${id}`
    const owner = deployed.get(id)
    if (!m && owner !== undefined) throw new ConfigError(`${field}: "${id}" is a deployment's upstream id, and its requests are priced under their model's id: give the price as pricing.overrides.${owner}, or as the model's own price`)
    if (!m) throw new ConfigError(`${field}: unknown model "${id}": neither the catalog, the config's models nor the price library has it, and it is not of a family's naming (gpt-…, o1…, chatgpt-…, codex-…, claude-…, mock-…), so no request could name it`)
    if (m.id !== id && m.upstreamId !== id) throw new ConfigError(`${field}: "${id}" is an alias of ${m.id}, whose requests are priced under its id: give the price as pricing.overrides.${m.id}, or as the model's own price`)
  }
}

/** Where each configured model is served and what it falls back to, and where the families' other models go (`switchyard config`). */
export function deploymentTable(config: Pick<Config, 'providers' | 'models'>, catalog: Catalog) {
  const models = Object.fromEntries(
    config.models.map((m) => {
      const c = catalog.resolve(m.id)!
      return [m.id, { deployments: c.deployments, fallbacks: c.fallbacks }]
    }),
  )
  const familyDefaults = { openai: defaultProviderId(config.providers, 'openai'), anthropic: defaultProviderId(config.providers, 'anthropic') }
  return { models, familyDefaults }
}
