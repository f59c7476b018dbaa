// Token counting with a real BPE (o200k), for the mock provider's usage and for billing
// what a stream produced when it ended before the upstream reported usage.
// For Claude-family models o200k is an estimate of Anthropic's own tokenizer.
import { countBounded } from './bounded-bpe.ts'
import { nextTurn } from '../lib/turn.ts'
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
    case 'web-search':
      // what a search found goes back to Claude (the pages, encrypted) and is billed as input:
      // counted as its text, which errs high
      return p.providerData?.anthropic ? JSON.stringify(p.providerData.anthropic) : ''
    default:
      // Images and binary documents are not counted.
      return ''
  }
}

const textsOf = (req: GenerationRequest): string[] =>
  [
    ...(req.system ?? []).map(partText),
    ...req.messages.flatMap((m) => m.content.map(partText)),
    ...(req.tools ?? []).map((t) => `${t.name} ${t.description ?? ''} ${JSON.stringify(t.parameters)}`),
  ].filter(Boolean)

/** The request's system, message and tool text. */
export function requestText(req: GenerationRequest): string {
  return textsOf(req).join('\n')
}

/** Text joined between two turns of the loop at most (requestTextParts). */
const JOIN_SLICE = 512 * 1024

/**
 * `requestText` in parts (their concatenation is it), each joined in a turn of the loop of its
 * own: a turn continuing a stored thread of 10 MB joined its 10,000 messages' text in one step
 * of 30–70 ms on a loaded VM. The token worker joins the parts (countTokensAsync).
 */
export async function requestTextParts(req: GenerationRequest): Promise<string[]> {
  const texts = textsOf(req)
  const parts: string[] = []
  for (let from = 0, at = 0, chars = 0; at < texts.length; ) {
    chars += texts[at++]!.length
    if (chars < JOIN_SLICE && at < texts.length) continue
    // the separator a part of its own: a part made by `+` would be a rope, flattened (a copy of
    // the whole text, all at once) when posted to the worker
    if (parts.length > 0) {
      await nextTurn()
      parts.push('\n')
    }
    parts.push(texts.slice(from, at).join('\n'))
    from = at
    chars = 0
  }
  return parts
}
