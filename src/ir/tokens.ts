// Token counting with a real BPE (o200k), for the mock provider's usage and for billing
// what a stream produced when it ended before the upstream reported usage (pitfall 14).
// For Claude-family models o200k is an estimate of Anthropic's own tokenizer.
import type { GenerationRequest, Part, Usage } from './types.ts'

type Bpe = typeof import('gpt-tokenizer/encoding/o200k_base')
let bpe: Bpe | undefined

/**
 * The encoding's tables cost tens of MiB and tens of ms to load: only a gateway that
 * actually needs them (mock traffic, an interrupted stream) pays, on first use.
 */
export function tokenizer(): Bpe {
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

/**
 * Usage to bill for a stream that ended early: what the upstream reported, raised to
 * what was visibly produced, with the prompt counted when the upstream never said.
 * Never lower than reported.
 */
export function billedUsage(reported: Usage, producedText: string, promptText: () => string): Usage {
  const u = { ...reported }
  const produced = countTokens(producedText)
  if (produced > u.outputTokens) u.outputTokens = produced
  if (u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens === 0) u.inputTokens = countTokens(promptText())
  return u
}
