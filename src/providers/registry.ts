// The adapters a running gateway has: OpenAI and Anthropic when configured, the mock always.
import type { CatalogModel } from '../config/catalog.ts'
import type { Config } from '../config/load.ts'
import { AnthropicAdapter } from './anthropic/adapter.ts'
import { MockAdapter } from './mock/adapter.ts'
import { OpenAIAdapter } from './openai/adapter.ts'
import { UpstreamError, type ProviderAdapter } from './types.ts'

export interface ProviderRegistry {
  openai?: OpenAIAdapter
  anthropic?: AnthropicAdapter
  mock: MockAdapter
  /** The adapter that serves a catalog entry (`model.provider`). */
  providerFor(model: CatalogModel): ProviderAdapter
}

export function createProviders(config: Pick<Config, 'providers'>): ProviderRegistry {
  const openai = config.providers.openai && new OpenAIAdapter(config.providers.openai)
  const anthropic = config.providers.anthropic && new AnthropicAdapter(config.providers.anthropic)
  const mock = new MockAdapter()
  const byKind: Record<string, ProviderAdapter | undefined> = { openai, anthropic, mock }
  return {
    openai,
    anthropic,
    mock,
    providerFor(model) {
      const a = byKind[model.provider]
      // The catalog sends unconfigured families to the mock, so this is a wiring bug, not user error.
      if (!a) throw new UpstreamError({ status: 502, message: `model ${model.id} needs the ${model.provider} provider, which is not configured`, type: 'provider_not_configured' })
      return a
    },
  }
}
