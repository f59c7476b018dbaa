// The attribute names spans carry. The GenAI ones are spelled here, not imported: the semantic
// conventions package keeps them in its `incubating` entry, whose names may change in a minor
// release (the package itself says to copy them). The stable ones come from the package.
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions'
import type { ProviderConfig } from '../config/providers.ts'

export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  maxTokens: 'gen_ai.request.max_tokens',
  temperature: 'gen_ai.request.temperature',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
} as const

export const HTTP = { status: ATTR_HTTP_RESPONSE_STATUS_CODE, errorType: ATTR_ERROR_TYPE, address: ATTR_SERVER_ADDRESS, port: ATTR_SERVER_PORT } as const

export const SWITCHYARD = {
  requestId: 'switchyard.request.id',
  surface: 'switchyard.surface',
  stream: 'switchyard.stream',
  keyId: 'switchyard.key.id',
  account: 'switchyard.account',
  batchId: 'switchyard.batch.id',
  provider: 'switchyard.provider',
  generationId: 'switchyard.generation.id',
  cost: 'switchyard.cost_usd',
  attempts: 'switchyard.attempts',
  ttftMs: 'switchyard.ttft_ms',
  countedUsage: 'switchyard.usage.counted_by_gateway',
  /** Answered from the response cache: on the request's span, and on its call, which reached no upstream. */
  cached: 'switchyard.cached',
} as const

/**
 * `gen_ai.provider.name` of a provider: the conventions' names for OpenAI, Azure OpenAI and
 * Anthropic; an OpenAI-compatible server is none of those, so it goes by its configured id.
 */
export function genAiProvider(p: Pick<ProviderConfig, 'id' | 'kind'> | undefined): string {
  switch (p?.kind) {
    case 'openai':
      return 'openai'
    case 'azure-openai':
      return 'azure.ai.openai'
    case 'anthropic':
      return 'anthropic'
    case 'openai-compatible':
      return p.id
    default:
      return 'switchyard.mock'
  }
}
