// The mock's usage, counted with the shared o200k tokenizer in the token worker, so a huge
// prompt never holds the request thread.
import { requestTextParts } from '../../ir/tokens.ts'
import type { GenerationRequest } from '../../ir/types.ts'
import { countTokensAsync, truncateTokensAsync } from '../../tokens/count.ts'

export { countTokensAsync, truncateTokensAsync }

/** The request's message, system and tool text, counted. */
export function inputTokens(req: GenerationRequest, lane?: string): Promise<number> {
  return requestTextParts(req).then((parts) => countTokensAsync(parts, lane))
}
