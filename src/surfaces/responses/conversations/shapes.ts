// The shapes of conversations and their items as OpenAI's Conversations API has them: a
// conversation's id (`conv_` and 48 hex digits), an item's id where it came without one, and an
// item as it is stored (a message's text as content parts, with a status; listed.ts fills in the
// rest of its listed form).
import type { Item } from '../items.ts'
import { hex } from '../item-ids.ts'
import { idPrefixOf } from '../listed.ts'

type Obj = Record<string, unknown>

export const newConversationId = () => `conv_${hex(48)}`

/** An id of the gateway's conversations: a turn naming one continues it, not a conversation of that name. */
export const isConversationId = (id: string) => /^conv_[0-9a-f]{48}$/.test(id)

/** A new id for an item of a conversation (40 hex digits: never taken for one of a response's output items, item-ids.ts). */
export const newItemId = (it: Item) => `${idPrefixOf(it.type)}_${hex(40)}`

/** An item as a conversation keeps it: under `id`, a message's text as parts, with a status. */
export function keptItem(it: Item, id: string): Obj {
  const out: Obj = { ...it, id }
  if (it.type !== 'message') return out
  if (typeof it.content === 'string') out.content = [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }]
  out.status ??= 'completed'
  return out
}

/**
 * A conversation's reasoning item names the model whose turn made it, under a field of the
 * gateway's that no client or upstream is shown (reasoned / unreasoned). OpenAI's encrypted
 * reasoning goes back only to the model that made it (passthrough.ts), as a stored response's
 * row names its model; a conversation's items have no row of their own.
 */
const REASONED_BY = 'switchyard_model'

/** A turn's output items as its conversation keeps them: each reasoning item with its model. */
export const reasoned = (items: Item[], model: string): Item[] =>
  items.some((it) => it.type === 'reasoning') ? items.map((it) => (it.type === 'reasoning' ? { ...it, [REASONED_BY]: model } : it)) : items

/** A kept item without the field, and the model it names (undefined for an item without it). */
export function unreasoned<T extends object>(it: T): { item: T; model: string | undefined } {
  if (!(REASONED_BY in it)) return { item: it, model: undefined }
  const { [REASONED_BY]: model, ...rest } = it as Record<string, unknown>
  return { item: rest as T, model: typeof model === 'string' ? model : undefined }
}
