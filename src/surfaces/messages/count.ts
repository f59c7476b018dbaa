// messages/count_tokens in Anthropic's shape: the upstream's own count for Claude-family
// models with an upstream; a tokenizer's (o200k) for the rest (OpenAI family, the mock).
import { defaultMaxTokens } from '../../config/catalog.ts'
import type { CallContext } from '../../routing/contract.ts'
import { requestText } from '../../ir/tokens.ts'
import { countTokensAsync } from '../../tokens/count.ts'
import { resolveModel } from '../../routing/router.ts'
import { applyFamilyRules } from '../../routing/params.ts'
import { PARAMS } from './params.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import type { Services } from '../../services.ts'
import { messagesToIR } from './decode.ts'
import { normalizeMessagesBody, validateMessages } from './validate.ts'

/** count_tokens takes a messages body without `max_tokens`; the checks are otherwise the same. */
const PLACEHOLDER_MAX = 1

export async function countMessageTokens(s: Pick<Services, 'catalog' | 'config' | 'providers'>, raw: unknown, rc: RequestContext): Promise<number> {
  const given = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined
  const needsMax = given !== undefined && (given.max_tokens === undefined || given.max_tokens === null)
  const body = normalizeMessagesBody(needsMax ? { ...given, max_tokens: PLACEHOLDER_MAX } : raw)
  const model = resolveModel(s.catalog, body.model, 'messages')
  rc.onModel?.(model.id)
  // The model's own cap stands in for the absent max_tokens, so a thinking budget still fits below it.
  if (needsMax) body.max_tokens = defaultMaxTokens(model)
  validateMessages(body, model, rc.betas)
  const rules = applyFamilyRules(body, PARAMS, model.family, s.config.compat.crossFamily, model.id)
  const ir = messagesToIR(body, model, rules)
  const adapter = s.providers.providerFor(model)
  if (adapter.countTokens) {
    const ctx: CallContext = { signal: rc.signal, model, requestId: rc.requestId, betas: rc.betas, lane: rc.apiKey.id }
    return adapter.countTokens(ir, ctx)
  }
  return countTokensAsync(requestText(ir), rc.apiKey.id)
}
