// The shapes of conversations and their items as OpenAI's Conversations API has them: a
// conversation's id (`conv_` and 48 hex digits), an item's id where it came without one, and an
// item as it is stored and listed (a message's text as content parts, with a status).
import type { Item } from '../items.ts'
import { hex } from '../item-ids.ts'

type Obj = Record<string, unknown>


export const newConversationId = () => `conv_${hex(48)}`

/** An id of the gateway's conversations: a turn naming one continues it, not a conversation of that name. */
export const isConversationId = (id: string) => /^conv_[0-9a-f]{48}$/.test(id)

/** Each item type's id prefix, as OpenAI's items have them; another type's is `item`. */
const PREFIX: Partial<Record<string, string>> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
  reasoning: 'rs',
  computer_call: 'cu',
  computer_call_output: 'cuo',
}

/** A new id for an item of a conversation (40 hex digits: never taken for one of a response's output items, item-ids.ts). */
export const newItemId = (it: Item) => `${PREFIX[it.type] ?? 'item'}_${hex(40)}`

/** An item as a conversation keeps and lists it: under `id`, a message's text as parts, with a status. */
export function listedItem(it: Item, id: string): Obj {
  const out: Obj = { ...it, id }
  if (it.type !== 'message') return out
  if (typeof it.content === 'string') out.content = [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }]
  out.status ??= 'completed'
  return out
}
