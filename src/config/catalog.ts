// Model resolution: the built-in table (models.ts) plus config `models`, with context windows
// from @pydantic/genai-prices. What a model's usage costs is prices.ts's; what a config may not
// say of its models, catalog-checks.ts's.
import { calcPrice } from './price-library.ts'
import type { Family, Usage } from '../ir/types.ts'
import { defaultProviderId, kindOf, MOCK_ID, type Deployment, type ProviderConfig, type ProviderKind } from './providers.ts'
import type { Config } from './load.ts'
import { lacksOfGeneration } from '../routing/openai-models.ts'
import { MODELS, type DeploymentSpec, type ModelRow, type Surface, type Lack } from './models.ts'
import { checkDeployments } from './upstreams.ts'
import type { PriceEntry } from './schema.ts'
import { Prices, type Priced } from './prices.ts'
import { checkAliases, checkFallbacks, checkOverrides } from './catalog-checks.ts'

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
  /** What it does not take (routing/needs.ts); absent: whatever it is sent. */
  lacks?: Lack[]
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

/** A Claude model's version from its id, as a number (Opus 4.7: 4.07), or undefined (the 3s' ids name it first). */
export function claudeVersion(id: string): number | undefined {
  const m = CLAUDE_VERSION.exec(id)
  return m ? Number(m[1]) + Number(m[2] ?? 0) / 100 : undefined
}

/** The thinking form of a Claude model, from its id's version (catalog `adaptiveThinking`). */
export function adaptiveThinkingOf(id: string): CatalogModel['adaptiveThinking'] {
  const version = claudeVersion(id)
  if (version === undefined) return undefined
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
  private prices: Prices
  private learned = new Map<string, CatalogModel>()

  constructor(rows: ModelRow[], private readonly providers: Record<string, ProviderConfig>, pricing: Config['pricing'], configPrices: Record<string, PriceEntry> = {}) {
    // the library's loose match would price a mock id (`mock-claude-v2x` as Claude 2), and an
    // unlisted model has no price: neither is priced by it
    this.prices = new Prices(pricing, configPrices, (id) => id.startsWith('mock-') || (!this.byId.has(id) && this.resolve(id)?.unlisted === true))
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
    // the model it is sent as (a deployment's upstream id where only those name it)
    const sentAs = row.upstreamId ?? specs.find((d) => d.upstreamId !== undefined)?.upstreamId ?? row.id
    const lacks = [...new Set([...(row.lacks ?? []), ...(row.family === 'openai' && !sentAs.startsWith('mock-') ? lacksOfGeneration(sentAs) : [])])]
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
      // the form of the Claude model it is sent as
      ...(row.family === 'anthropic' ? thinkingForm(sentAs) : {}),
      surfaces: row.surfaces ?? ALL_SURFACES,
      ...(lacks.length > 0 ? { lacks } : {}),
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

  list(): CatalogModel[] {
    return this.canonical
  }

  /**
   * USD cost of one request at catalog prices × (1 − discount), or null when the model
   * has no known price (recorded as unpriced, never as $0). Priced by prices.ts.
   */
  cost(model: Priced, u: Usage, at: Date = new Date()): number | null {
    return this.prices.cost(model, u, at)
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
      lacks: lacksOf(m, known?.lacks),
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

/** What a configured model does not take: what the model it is read as lacks, but as its `images`, `files` and `tools` say. */
function lacksOf(m: Pick<Config['models'][number], 'images' | 'files' | 'tools'>, known: Lack[] = []): Lack[] {
  const out = new Set(known)
  for (const l of ['images', 'files', 'tools'] as const) {
    if (m[l] === false) out.add(l)
    else if (m[l] === true) out.delete(l)
  }
  return [...out]
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
