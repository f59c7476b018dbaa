// Reasoning items ⇄ IR reasoning parts. A Claude model's thinking must go back to it byte
// for byte with its signature, and a Responses client (Codex with store:false)
// sends reasoning back only as items: so the thinking and its signature ride in the item's
// `encrypted_content`, in a gateway envelope only the gateway reads. OpenAI's own
// encrypted reasoning is kept whole for OpenAI and never reaches another family. A Claude web
// search rides to such a client the same way (its blocks in a reasoning item of its own beside
// its web_search_call item, which has no field for them; held-search.ts keeps them where the
// gateway stores the thread instead).
import { badRequest } from '../../http/errors.ts'
import { crowdedHidden, parseHidden } from '../../http/hidden-json.ts'
import type { PartBounds } from '../../http/parts.ts'
import type { Part } from '../../ir/types.ts'
import { isObj } from '../../lib/json.ts'
import { keptBlocks } from '../../ir/kept-search.ts'
import { searchFrom } from './held-search.ts'
import type { ReasoningItem } from './items.ts'

type Reasoning = Extract<Part, { type: 'reasoning' }>
type Search = Extract<Part, { type: 'web-search' }>

const ENVELOPE = 'sy1.'
const seal = (j: object): string => ENVELOPE + Buffer.from(JSON.stringify(j)).toString('base64url')

/** A reasoning item the gateway sealed (a Claude model's thinking or web search): no other provider can read it. */
export const sealedByGateway = (it: { type?: unknown; encrypted_content?: unknown }): boolean =>
  it.type === 'reasoning' && typeof it.encrypted_content === 'string' && it.encrypted_content.startsWith(ENVELOPE)

export function sealReasoning(p: Reasoning): string | undefined {
  if (p.redacted !== undefined) return seal({ r: p.redacted })
  if (p.signature !== undefined) return seal({ t: p.text, s: p.signature })
  return undefined
}

/** A Claude web search's blocks, with the query and status its item shows, as a reasoning item; undefined for a search without them. */
export function searchReasoningItem(id: string, p: Search): ReasoningItem | undefined {
  const kept = keptBlocks(p)
  if (!kept) return undefined
  return { id, type: 'reasoning', summary: [], encrypted_content: seal({ w: { ...kept, q: p.query, f: p.status === 'failed' } }) }
}

/** An envelope's JSON, its parts taken from `left` (a 400 past it); undefined where it is not JSON in the body's rules. */
function envelopeJson(enc: string, left: PartBounds, where: string): unknown {
  const j = parseHidden(Buffer.from(enc.slice(ENVELOPE.length), 'base64url').toString('utf8'), left)
  if ('crowded' in j) throw badRequest(`${where}.encrypted_content: holds ${crowdedHidden}, with the rest of this request's sealed reasoning (the gateway's holds a few)`)
  return 'value' in j ? j.value : undefined
}

/**
 * A reasoning item → an IR part (Claude's thinking, or its web search, restored from the
 * envelope), or undefined. `left`: what the request's hidden JSON may still hold (hiddenBounds).
 */
export function openReasoning(it: ReasoningItem, left: PartBounds, where: string): Reasoning | Search | undefined {
  const enc = it.encrypted_content
  if (typeof enc === 'string' && enc.startsWith(ENVELOPE)) {
    const j = envelopeJson(enc, left, where)
    if (!isObj(j)) return undefined
    if (typeof j.r === 'string') return { type: 'reasoning', text: '', redacted: j.r }
    if (typeof j.t === 'string' && typeof j.s === 'string') return { type: 'reasoning', text: j.t, signature: j.s }
    if (isObj(j.w)) return searchFrom(j.w, typeof j.w.q === 'string' ? j.w.q : '', j.w.f === true)
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
