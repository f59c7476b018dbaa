// Counting a request's prompt tokens (messages/count_tokens) from its plan: the upstream's own
// count where the model's adapter has one, a tokenizer's otherwise. A surface brings the plan;
// which provider answers is the pipeline's to choose, as for a generation. Its files and
// document URLs are resolved first, as for a generation: a file id is read with the caller's key
// (another key's, or none, is the same 400), and what it holds is counted.
import { requestTextParts } from '../ir/tokens.ts'
import type { CallContext } from '../routing/contract.ts'
import type { Services } from '../services.ts'
import { countTokensAsync } from '../tokens/count.ts'
import type { RequestContext } from './context.ts'
import { NO_MEDIA, type Plan } from './surface.ts'

export async function countPromptTokens(s: Pick<Services, 'providers' | 'media'>, plan: Plan, rc: RequestContext): Promise<number> {
  const ir = await (s.media ?? NO_MEDIA).ir(plan.ir(), rc, plan.model)
  const adapter = s.providers.providerFor(plan.model)
  if (adapter.countTokens) {
    const ctx: CallContext = { signal: rc.signal, model: plan.model, requestId: rc.requestId, betas: rc.betas, lane: rc.apiKey.id }
    return adapter.countTokens(ir, ctx)
  }
  return countTokensAsync(await requestTextParts(ir), rc.apiKey.id)
}
