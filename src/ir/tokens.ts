// Token counting with a real BPE (o200k), for the mock provider's usage and for billing
// what a stream produced when it ended before the upstream reported usage (pitfall 14).
// For Claude-family models o200k is an estimate of Anthropic's own tokenizer.
import { countBounded, countBoundedAsync } from './bounded-bpe.ts'
import type { GenerationRequest, Part } from './types.ts'

/**
 * Tokens of `text` on the calling thread, holding it a few ms at most: exact for ordinary
 * text up to tens of KB, estimated past that (D1). The request path counts in the token
 * worker instead (src/tokens/count.ts); this is for tests and tools.
 */
export const countTokens = (text: string): number => countBounded(text)

/**
 * Tokens of `text` of any size without holding the loop: counted in slices that give it
 * back every ~2 ms, exact up to about a second of work and estimated past it. Same counts
 * as the gateway's token worker (src/tokens/count.ts), which the request path prefers
 * because it keeps that CPU off the request thread; the IR cannot own the worker, whose
 * entry point the binary's build embeds.
 */
export const countTokensAsync = (text: string): Promise<number> => countBoundedAsync(text)

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
