// Token counts for the mock's usage, with a real BPE (o200k), not a length guess.
import { decode, encode } from 'gpt-tokenizer/encoding/o200k_base'
import type { GenerationRequest, Part } from '../../ir/types.ts'

export const countTokens = (text: string): number => (text ? encode(text).length : 0)

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
  const tokens = encode(text)
  if (tokens.length <= max) return { text, cut: false }
  return { text: decode(tokens.slice(0, max)), cut: true }
}
