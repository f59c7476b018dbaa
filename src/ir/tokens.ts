// Token counting with a real BPE (o200k), for the mock provider's usage and for billing
// what a stream produced when it ended before the upstream reported usage.
// For Claude-family models o200k is an estimate of Anthropic's own tokenizer.
import { countBounded } from './bounded-bpe.ts'
import type { GenerationRequest, Part } from './types.ts'

/**
 * Tokens of `text` on the calling thread, holding it a few ms at most: exact for ordinary
 * text up to tens of KB, estimated past that. The request path counts in the token
 * worker instead (src/tokens/count.ts); this is for tests and tools.
 */
export const countTokens = (text: string): number => countBounded(text)

function partText(p: Part): string {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return p.text
    case 'tool-call':
      return `${p.name} ${p.arguments}`
    case 'tool-result':
      return typeof p.content === 'string' ? p.content : p.content.map(partText).join('\n')
    case 'document':
      return p.source.kind === 'text' ? p.source.data : ''
    default:
      // Images and binary documents are not counted.
      return ''
  }
}

/** The request's system, message and tool text. */
export function requestText(req: GenerationRequest): string {
  return [
    ...(req.system ?? []).map(partText),
    ...req.messages.flatMap((m) => m.content.map(partText)),
    ...(req.tools ?? []).map((t) => `${t.name} ${t.description ?? ''} ${JSON.stringify(t.parameters)}`),
  ]
    .filter(Boolean)
    .join('\n')
}
