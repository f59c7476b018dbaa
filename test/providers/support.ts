// Shared bits for the provider tests: a catalog entry, a call context, a provider config
// pointed at the fake upstream, and small IR builders.
import type { CatalogModel } from '../../src/config/catalog.ts'
import type { GenerationRequest, Message, StreamEvent } from '../../src/ir/types.ts'
import type { CallContext, ProviderConfig, ProviderKind } from '../../src/providers/types.ts'

export const TEST_KEY = 'sk-test-SECRET-upstream-key-0123456789'

export function model(over: Partial<CatalogModel> = {}): CatalogModel {
  const m: Omit<CatalogModel, 'deployments' | 'fallbacks'> & Partial<CatalogModel> = {
    id: 'gpt-4o',
    aliases: [],
    family: 'openai',
    provider: 'openai',
    upstreamId: 'gpt-4o',
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    reasoning: false,
    reasoningSummaries: false,
    surfaces: ['chat', 'responses', 'messages'],
    created: 0,
    ...over,
  }
  // served where its provider kind says, as the catalog would place it
  return { deployments: [{ provider: m.provider, upstreamId: m.upstreamId, weight: 1, priority: 1 }], fallbacks: [], ...m }
}

export const claude = (over: Partial<CatalogModel> = {}) =>
  model({ id: 'claude-sonnet-4-5', family: 'anthropic', provider: 'anthropic', upstreamId: 'claude-sonnet-4-5', maxOutputTokens: 64_000, reasoning: true, ...over })

export function ctx(m: CatalogModel = model(), signal: AbortSignal = new AbortController().signal): CallContext {
  return { signal, model: m, requestId: 'req_test' }
}

export function providerConfig(kind: ProviderKind, baseUrl: string, over: Partial<ProviderConfig> = {}): ProviderConfig {
  return { id: kind, name: kind, kind, baseUrl, apiKey: TEST_KEY, apiKeys: [TEST_KEY], responses: kind === 'openai', timeoutMs: 5_000, maxRetries: 2, ...over }
}

export const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

export function request(over: Partial<GenerationRequest> = {}): GenerationRequest {
  return { model: 'gpt-4o', messages: [user('hello')], stream: false, ...over }
}

export async function drain(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = []
  for await (const e of events) out.push(e)
  return out
}

/** Text of every text part, joined. */
export function textOf(content: { type: string; text?: string }[]): string {
  return content.filter((p) => p.type === 'text').map((p) => p.text).join('')
}
