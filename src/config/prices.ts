// What a request costs: the operator's prices (a model's own `price`, `pricing.overrides`) or
// the price library's (@pydantic/genai-prices), scaled by the processing tier and Claude's modes
// priced apart, plus the image tool's tokens and new containers, less the configured discount.
// The catalog (catalog.ts) says which model a request is; this says what its usage costs.
import { calcPrice } from './price-library.ts'
import type { Family, ImageGenUsage, Usage } from '../ir/types.ts'
import type { Config } from './load.ts'
import { premiumFactor } from './claude-premiums.ts'
import { tierFactor } from './service-tiers.ts'
import type { PriceEntry } from './schema.ts'
import { imageLibraryUsage, imageModelId, KNOWN_IMAGE_MODELS } from './image-prices.ts'
import { containersUsd } from '../billing/containers.ts'

/** What a model is priced by (of a catalog entry, config/catalog.ts). */
export interface Priced {
  id: string
  family: Family
  /** The id it is sent upstream as. */
  upstreamId: string
  /** The model it is priced as where its own ids have no price. */
  pricedAs?: string
}

/** Models whose library rates are kept (an hour each): ids clients name are many. */
const RATES_KEPT = 2048

export class Prices {
  /** Configured prices, as rates: derived once, read for every record. */
  private overrides: Map<string, Rates>
  private discount: number
  private rates = new Map<string, { hour: number; rates: Rates | 'tiered' | null }>()

  /**
   * `unpriced`: an id the library must not price whatever its loose match makes of it (a mock
   * one, one the catalog serves unlisted); the operator's prices still apply to it.
   */
  constructor(pricing: Config['pricing'], configPrices: Record<string, PriceEntry>, private readonly unpriced: (id: string) => boolean) {
    this.overrides = new Map(Object.entries({ ...configPrices, ...pricing.overrides }).map(([id, p]) => [id, overrideRates(p)]))
    this.discount = pricing.discount
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

  /**
   * The price library evaluates its generic unit machinery on every call (~15 µs, a fifth
   * of the gateway's CPU under load). Without tiers, cost is linear in the four counts,
   * so per-token rates are derived from the library once per model per hour (prices can
   * change on a date) and applied directly; tiered models still go through the library.
   */
  private libraryCost(model: Priced, u: Usage, at: Date): number | null {
    // no price, and no entry in the cache, for what the library must not price (see the constructor)
    if (this.unpriced(model.id)) return null
    const key = `${model.family}:${model.upstreamId}:${model.id}`
    const hour = Math.floor(at.getTime() / 3_600_000)
    let entry = this.rates.get(key)
    if (!entry || entry.hour !== hour) {
      entry = { hour, rates: deriveRates(model, at) }
      // ids clients name are many: derived again rather than kept past a bound
      if (this.rates.size >= RATES_KEPT) this.rates.clear()
      this.rates.set(key, entry)
    }
    const r = entry.rates
    if (r === null) return null
    if (r === 'tiered') return libraryPrice(model, libraryUsage(u), at)?.total_price ?? null
    return linearCost(r, u)
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
