// Model resolution and prices. The built-in table (models.ts) plus config `models`, with
// context windows and prices from @pydantic/genai-prices; config can override prices.
import { calcPrice } from '@pydantic/genai-prices'
import type { Family, Usage } from '../ir/types.ts'
import type { ProviderKind } from '../providers/types.ts'
import type { Config } from './load.ts'
import { MODELS, type ModelRow, type Surface } from './models.ts'
import type { PriceEntry } from './schema.ts'

export type { Surface } from './models.ts'

export interface CatalogModel {
  /** Canonical id (what lists show and records store). */
  id: string
  aliases: string[]
  family: Family
  provider: ProviderKind
  /** Model id sent upstream: the id the client used (a dated alias stays dated). */
  upstreamId: string
  contextWindow: number
  maxOutputTokens: number
  reasoning: boolean
  reasoningSummaries: boolean
  surfaces: Surface[]
  /** Epoch seconds, for list shapes. */
  created: number
}

const ALL_SURFACES: Surface[] = ['chat', 'responses', 'messages']
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

export class Catalog {
  private byId = new Map<string, CatalogModel>()
  private canonical: CatalogModel[] = []
  private overrides: Record<string, PriceEntry>
  private discount: number

  constructor(rows: ModelRow[], private providerOf: (family: Family) => ProviderKind, pricing: Config['pricing'], configPrices: Record<string, PriceEntry> = {}) {
    this.overrides = { ...configPrices, ...pricing.overrides }
    this.discount = pricing.discount
    for (const row of rows) this.add(row)
  }

  private add(row: ModelRow) {
    const provider = row.id.startsWith('mock-') ? 'mock' : this.providerOf(row.family)
    const m: CatalogModel = {
      id: row.id,
      aliases: row.aliases ?? [],
      family: row.family,
      provider,
      upstreamId: row.upstreamId ?? row.id,
      contextWindow: row.contextWindow,
      maxOutputTokens: row.maxOutputTokens,
      reasoning: row.reasoning ?? false,
      reasoningSummaries: row.summaries ?? false,
      surfaces: row.surfaces ?? ALL_SURFACES,
      created: CREATED,
    }
    const existing = this.canonical.findIndex((c) => c.id === m.id)
    if (existing >= 0) this.canonical[existing] = m
    else this.canonical.push(m)
    this.byId.set(m.id, m)
    for (const a of m.aliases) this.byId.set(a, { ...m, upstreamId: a })
  }

  /** The catalog entry for an id or alias; ids the price library knows are accepted too. */
  resolve(id: string): CatalogModel | undefined {
    const hit = this.byId.get(id)
    if (hit) return hit
    if (typeof id !== 'string' || id.length === 0 || id.length > 256) return undefined
    if (id.startsWith('mock-')) {
      const family = mockFamily(id)
      const base = this.byId.get(family === 'anthropic' ? 'mock-claude' : 'mock-gpt')!
      const m = { ...base, id, upstreamId: id, aliases: [] }
      this.byId.set(id, m)
      return m
    }
    const family: Family | undefined = id.startsWith('claude-') ? 'anthropic' : /^(gpt-|o\d|chatgpt-|codex-)/.test(id) ? 'openai' : undefined
    if (!family) return undefined
    const info = libraryInfo(id, family)
    if (!info) return undefined
    const sibling = this.canonical.find((c) => c.family === family && c.provider !== 'mock')
    this.add({
      id,
      family,
      contextWindow: info.contextWindow ?? sibling?.contextWindow ?? 128_000,
      maxOutputTokens: sibling?.maxOutputTokens ?? 16_384,
      reasoning: family === 'anthropic' || /^(o\d|gpt-5)/.test(id),
      summaries: /^(o\d|gpt-5)/.test(id),
    })
    return this.byId.get(id)
  }

  list(): CatalogModel[] {
    return this.canonical
  }

  /**
   * USD cost of one request at catalog prices × (1 − discount), or null when the model
   * has no known price (recorded as unpriced, never as $0).
   */
  cost(model: Pick<CatalogModel, 'id' | 'family' | 'upstreamId'>, u: Usage, at: Date = new Date()): number | null {
    const o = this.overrides[model.id] ?? this.overrides[model.upstreamId]
    let total: number | null = null
    if (o && o.input_mtok !== undefined && o.output_mtok !== undefined) {
      total =
        (u.inputTokens * o.input_mtok +
          u.cacheReadTokens * (o.cache_read_mtok ?? o.input_mtok) +
          u.cacheWriteTokens * (o.cache_write_mtok ?? o.input_mtok) +
          u.outputTokens * o.output_mtok) /
        1e6
    } else {
      const usage = {
        input_tokens: u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens,
        cache_read_tokens: u.cacheReadTokens,
        cache_write_tokens: u.cacheWriteTokens,
        output_tokens: u.outputTokens,
      }
      const r =
        calcPrice(usage, model.upstreamId, { providerId: model.family, timestamp: at }) ??
        calcPrice(usage, model.id, { providerId: model.family, timestamp: at })
      if (r) total = r.total_price
    }
    if (total === null || !Number.isFinite(total)) return null
    return total * (1 - this.discount)
  }
}

export function buildCatalog(config: Config): Catalog {
  const configured = (family: Family): ProviderKind => (config.providers[family] ? family : 'mock')
  const rows: ModelRow[] = [...MODELS]
  const prices: Record<string, PriceEntry> = {}
  for (const m of config.models) {
    const builtin = MODELS.find((r) => r.id === m.id)
    rows.push({
      id: m.id,
      family: m.family,
      aliases: m.aliases ?? builtin?.aliases,
      upstreamId: m.upstream_id,
      contextWindow: m.context_window ?? builtin?.contextWindow ?? libraryInfo(m.id, m.family)?.contextWindow ?? 128_000,
      maxOutputTokens: m.max_output_tokens ?? builtin?.maxOutputTokens ?? 16_384,
      reasoning: m.reasoning ?? builtin?.reasoning,
      summaries: m.reasoning_summaries ?? builtin?.summaries,
      surfaces: m.surfaces ?? builtin?.surfaces,
    })
    if (m.price) prices[m.id] = m.price
  }
  return new Catalog(rows, configured, config.pricing, prices)
}
