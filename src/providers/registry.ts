// The adapters a running gateway has: one per configured provider id (the OpenAI adapter for
// the openai, openai-compatible and azure-openai kinds, the Anthropic one for anthropic), and
// the mock, always, as `mock`.
import type { CatalogModel } from '../config/catalog.ts'
import type { Config } from '../config/load.ts'
import { defaultProviderId, MOCK_ID } from '../config/providers.ts'
import { MemoryPoolPosition } from '../routing/pool-position.ts'
import { AnthropicAdapter } from './anthropic/adapter.ts'
import type { AdapterOptions } from './options.ts'
import { MockAdapter } from './mock/adapter.ts'
import { OpenAIAdapter } from './openai/adapter.ts'
import { UpstreamError, type CallContext, type Passthrough, type ProviderAdapter, type Wire } from './types.ts'

export interface ProviderRegistry {
  /** The adapter of the OpenAI family's own provider (the one models without deployments go to), when configured. */
  openai?: OpenAIAdapter
  /** The same for the Anthropic family. */
  anthropic?: AnthropicAdapter
  mock: MockAdapter
  /** The adapter of a provider id (a deployment's `provider`). */
  adapterFor(providerId: string): ProviderAdapter
  /** The adapter that serves a catalog entry: its first deployment's, sending that deployment's upstream id. */
  providerFor(model: CatalogModel): ProviderAdapter
}

/** `position`: where the key pools' rounds stand (memory unless given); `log`: where a refused key is told. */
export function createProviders(config: Pick<Config, 'providers'>, opts: AdapterOptions = {}): ProviderRegistry {
  const mock = new MockAdapter()
  const shared: AdapterOptions = { position: opts.position ?? new MemoryPoolPosition(), log: opts.log, transport: opts.transport }
  const byId = new Map<string, ProviderAdapter>([[MOCK_ID, mock]])
  for (const p of Object.values(config.providers)) byId.set(p.id, p.kind === 'anthropic' ? new AnthropicAdapter(p, shared) : new OpenAIAdapter(p, shared))
  const own = <T>(family: 'openai' | 'anthropic') => {
    const id = defaultProviderId(config.providers, family)
    return id === MOCK_ID ? undefined : (byId.get(id) as T)
  }
  const adapterFor = (id: string, what = `provider ${id}`) => {
    const a = byId.get(id)
    // Deployments name configured providers only (checked at load), so this is a wiring bug, not user error.
    if (!a) throw new UpstreamError({ status: 502, message: `${what} is not configured`, type: 'provider_not_configured' })
    return a
  }
  return {
    openai: own<OpenAIAdapter>('openai'),
    anthropic: own<AnthropicAdapter>('anthropic'),
    mock,
    adapterFor: (id) => adapterFor(id),
    providerFor(model) {
      const d = model.deployments[0]!
      const a = adapterFor(d.provider, `model ${model.id} needs the ${d.provider} provider, which`)
      return d.upstreamId === model.upstreamId ? a : atUpstreamId(a, d.upstreamId)
    },
  }
}

/** An adapter that sends `upstreamId` whatever model the call names (a deployment's own upstream id). */
export function atUpstreamId(adapter: ProviderAdapter, upstreamId: string): ProviderAdapter {
  const at = (ctx: CallContext): CallContext => ({ ...ctx, model: { ...ctx.model, upstreamId } })
  const passthrough: Partial<Record<Wire, Passthrough>> = {}
  for (const [wire, pt] of Object.entries(adapter.passthrough ?? {}) as [Wire, Passthrough][]) {
    passthrough[wire] = { tap: pt.tap, promptText: pt.promptText, call: (body, ctx, accept) => pt.call(body, at(ctx), accept) }
  }
  return {
    name: adapter.name,
    kind: adapter.kind,
    generate: (req, ctx) => adapter.generate(req, at(ctx)),
    stream: (req, ctx) => adapter.stream(req, at(ctx)),
    passthrough,
    countTokens: adapter.countTokens && ((req, ctx) => adapter.countTokens!(req, at(ctx))),
  }
}
