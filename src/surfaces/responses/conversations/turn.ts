// A responses turn in a conversation made through the Conversations API (`conversation:
// "conv_…"`): the model sees the conversation's items (those added through its items route and
// every earlier turn's input and output), and the turn's input and output are added to it once
// its response is stored. A conversation named otherwise is the gateway's by-name thread
// (thread.ts), as before.
import { badRequest, echo, HttpError } from '../../../http/errors.ts'
import type { Item } from '../items.ts'
import type { ConversationStore } from './store.ts'
import { reasoned, unreasoned } from './shapes.ts'
import { markReasonedBy } from '../thread.ts'

/** The items a turn in the key's conversation `id` continues from: a 404 when it has none of that id, a 400 past the thread bound. */
export async function conversationHistory(store: ConversationStore, apiKeyId: string, id: string, maxBytes: number): Promise<Item[]> {
  if (!(await store.get(apiKeyId, id))) throw new HttpError(404, `conversation: Conversation with id '${echo(id)}' not found.`)
  // sized before it is read: a conversation grown past the bound is not loaded to be refused
  const bytes = await store.size(id)
  if (bytes > maxBytes) {
    throw badRequest(`conversation: "${echo(id)}" holds ${bytes} bytes of items, over this gateway's limit of ${maxBytes} (responses.max_thread_bytes); delete some of its items or start a new conversation`)
  }
  // each reasoning item a turn made names its model for the thread's rule (passthrough.ts), and goes on without the field
  return (await store.items(id)).items.map((kept) => {
    const { item, model } = unreasoned(kept)
    if (model !== undefined) markReasonedBy(item, model)
    return item
  })
}

/**
 * Adds a stored turn's input and output to its conversation (its reasoning named by `model`, the
 * catalog model it ran on); resolves once written. A failed
 * write leaves the conversation without the turn (the reply has gone out whole): not thrown,
 * told to `failed` (the log), so an operator learns of it.
 */
export function appendTurn(store: ConversationStore, id: string, input: Item[], output: Item[], model: string, failed: (e: unknown) => void): Promise<void> {
  // tracked: a stop lets it end before the database closes, though the reply has gone out
  return store.track(store.append(id, [...input, ...reasoned(output, model)])).then(
    () => undefined,
    (e) => failed(e),
  )
}
