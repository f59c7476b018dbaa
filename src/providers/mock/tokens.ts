// The mock's usage, counted with the shared o200k tokenizer (src/ir/tokens.ts).
import { countTokens, requestText, tokenizer } from '../../ir/tokens.ts'
import type { GenerationRequest } from '../../ir/types.ts'

export { countTokens }

/** The request's message, system and tool text, counted. */
export function inputTokens(req: GenerationRequest): number {
  return countTokens(requestText(req))
}

/** `text` cut to at most `max` tokens. */
export function truncateTokens(text: string, max: number): { text: string; cut: boolean } {
  const { encode, decode } = tokenizer()
  const tokens = encode(text)
  if (tokens.length <= max) return { text, cut: false }
  return { text: decode(tokens.slice(0, max)), cut: true }
}
