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
export function listedItem(it: Item, id: string): Obj {
  const out: Obj = { ...it, id }
  if (it.type !== 'message') return out
  if (typeof it.content === 'string') out.content = [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }]
  out.status ??= 'completed'
  return out
}
