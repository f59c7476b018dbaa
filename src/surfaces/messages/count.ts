// messages/count_tokens in Anthropic's shape: the same checks as a messages request, then the
// prompt counted by the pipeline (the upstream's own count for Claude-family models with an
// upstream; a tokenizer's (o200k) for the rest).
import { defaultMaxTokens } from '../../config/catalog.ts'
import { countPromptTokens } from '../../pipeline/count.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { decodeContext } from '../../pipeline/surface.ts'
import { resolveModel } from '../../routing/router.ts'
import type { Services } from '../../services.ts'
import { messagesSurface } from './surface.ts'

export async function countMessageTokens(s: Pick<Services, 'catalog' | 'config' | 'providers' | 'media'>, raw: unknown, rc: RequestContext): Promise<number> {
  const given = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined
  // count_tokens takes a body without `max_tokens`: the model's own cap stands in for it, so a
  // thinking budget still fits below it (an unknown model is the decoder's 400 or 404)
  const needsMax = given !== undefined && (given.max_tokens === undefined || given.max_tokens === null)
  const cap = needsMax ? maxFor(s, given.model) : undefined
  const body = cap !== undefined ? { ...given, max_tokens: cap } : raw
  const plan = await messagesSurface.decode(body, decodeContext(s.catalog, s.config.compat.crossFamily, rc))
  return countPromptTokens(s, plan, rc)
}

/** The model's own output cap, or 1 when the model is not one the surface may serve (decode says why). */
function maxFor(s: Pick<Services, 'catalog'>, model: unknown): number {
  try {
    return defaultMaxTokens(resolveModel(s.catalog, model, 'messages'))
  } catch {
    return 1
  }
}
