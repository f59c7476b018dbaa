// Reasoning items ⇄ IR reasoning parts. A Claude model's thinking must go back to it byte
// for byte with its signature, and a Responses client (Codex with store:false)
// sends reasoning back only as items: so the thinking and its signature ride in the item's
// `encrypted_content`, in a gateway envelope only the gateway reads. OpenAI's own
// encrypted reasoning is kept whole for OpenAI and never reaches another family.
import type { Part } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'
import type { ReasoningItem } from './items.ts'

type Reasoning = Extract<Part, { type: 'reasoning' }>

const ENVELOPE = 'sy1.'

/** A reasoning item the gateway sealed (a Claude model's thinking): no other provider can read it. */
export const sealedByGateway = (it: { type?: unknown; encrypted_content?: unknown }): boolean =>
  it.type === 'reasoning' && typeof it.encrypted_content === 'string' && it.encrypted_content.startsWith(ENVELOPE)

export function sealReasoning(p: Reasoning): string | undefined {
  if (p.redacted !== undefined) return ENVELOPE + Buffer.from(JSON.stringify({ r: p.redacted })).toString('base64url')
  if (p.signature !== undefined) return ENVELOPE + Buffer.from(JSON.stringify({ t: p.text, s: p.signature })).toString('base64url')
  return undefined
}

/** A reasoning item → an IR part (Claude thinking restored from the envelope), or undefined. */
export function openReasoning(it: ReasoningItem): Reasoning | undefined {
  const enc = it.encrypted_content
  if (typeof enc === 'string' && enc.startsWith(ENVELOPE)) {
    try {
      const j: unknown = JSON.parse(Buffer.from(enc.slice(ENVELOPE.length), 'base64url').toString('utf8'))
      if (!isObj(j)) return undefined
      if (typeof j.r === 'string') return { type: 'reasoning', text: '', redacted: j.r }
      if (typeof j.t === 'string' && typeof j.s === 'string') return { type: 'reasoning', text: j.t, signature: j.s }
    } catch {
      return undefined
    }
    return undefined
  }
  const summary = Array.isArray(it.summary) ? it.summary.map((s) => (isObj(s) && typeof s.text === 'string' ? s.text : '')).join('\n\n') : ''
  return { type: 'reasoning', text: summary, providerData: { openai: it } }
}

/** An IR reasoning part → a reasoning output item; the summary shows the thinking only when summaries were asked for. */
export function reasoningItem(id: string, p: Reasoning, withSummary: boolean): ReasoningItem {
  // the reasoning item openReasoning read, as it came (its type is `reasoning` already)
  const fromOpenAI = p.providerData?.openai
  if (fromOpenAI) return { ...fromOpenAI, type: 'reasoning', id: fromOpenAI.id ?? id }
  const item: ReasoningItem = { id, type: 'reasoning', summary: withSummary && p.text ? [{ type: 'summary_text', text: p.text }] : [] }
  const sealed = sealReasoning(p)
  if (sealed) item.encrypted_content = sealed
  return item
}
