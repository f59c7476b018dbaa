// responses/input_tokens in OpenAI's shape: the same checks as a responses request (its thread
// read when it continues one), then the prompt counted by the pipeline: the upstream's own count
// for Claude-family models with an upstream, a tokenizer's (o200k, GPT's own) for the rest.
import { badRequest } from '../../http/errors.ts'
import { countPromptTokens } from '../../pipeline/count.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { decodeContext, type SurfaceSpec } from '../../pipeline/surface.ts'
import type { Services } from '../../services.ts'

export async function countResponseTokens(s: Pick<Services, 'catalog' | 'config' | 'providers' | 'media'>, surface: SurfaceSpec, raw: unknown, rc: RequestContext): Promise<number> {
  const plan = await surface.decode(withoutPersonality(raw), decodeContext(s.catalog, s.config.compat.crossFamily, rc))
  return countPromptTokens(s, plan, rc)
}

/** `personality` (a style preset) belongs to the count's body only: checked, then left out of what is counted. */
function withoutPersonality(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !Object.hasOwn(raw, 'personality')) return raw
  const { personality, ...rest } = raw as Record<string, unknown>
  if (personality !== null && typeof personality !== 'string') throw badRequest('personality: expected a string')
  return rest
}
