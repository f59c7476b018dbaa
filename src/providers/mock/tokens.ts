// Token counts for the mock's usage, with a real BPE (o200k), not a length guess.
import type { GenerationRequest, Part } from '../../ir/types.ts'

type Bpe = typeof import('gpt-tokenizer/encoding/o200k_base')
let bpe: Bpe | undefined

/**
 * The encoding's tables cost tens of MiB and tens of ms to load: only a gateway that
 * actually serves mock traffic pays for them, on first use.
 */
function tokenizer(): Bpe {
  bpe ??= require('gpt-tokenizer/encoding/o200k_base') as Bpe
  return bpe
}

export const countTokens = (text: string): number => (text ? tokenizer().encode(text).length : 0)

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

/** The request's message, system and tool text, counted. */
export function inputTokens(req: GenerationRequest): number {
  const texts = [
    ...(req.system ?? []).map(partText),
    ...req.messages.flatMap((m) => m.content.map(partText)),
    ...(req.tools ?? []).map((t) => `${t.name} ${t.description ?? ''} ${JSON.stringify(t.parameters)}`),
  ]
  return countTokens(texts.filter(Boolean).join('\n'))
}

/** `text` cut to at most `max` tokens. */
export function truncateTokens(text: string, max: number): { text: string; cut: boolean } {
  const { encode, decode } = tokenizer()
  const tokens = encode(text)
  if (tokens.length <= max) return { text, cut: false }
  return { text: decode(tokens.slice(0, max)), cut: true }
}
