// A checked responses-style request: the one shape decode, pass-through and encoders read
// (validate.ts makes it). The official Responses spelling of the request, whichever aliases
// the client used, plus the thread it continues.
import type { Item } from './items.ts'
import type { NamedContainer } from '../../containers/check.ts'
import type { ResponsesFormat } from './schema.ts'
import type { ThreadHead } from './thread.ts'
import type { ResponsesTool, ResponsesToolChoice } from './tools.ts'

export interface Turn {
  /** Items this request adds (input or messages, then tool outputs). */
  items: Item[]
  /** Items of the thread it continues, oldest first. */
  history: Item[]
  instructions?: string
  /** Tools in the official flat shape (chat-style nested functions and legacy `functions` flattened). */
  tools: ResponsesTool[]
  toolChoice?: ResponsesToolChoice
  effort?: string
  summary?: 'auto' | 'concise' | 'detailed'
  /** `text.format` (or `response_format`) in the Responses spelling. */
  format?: ResponsesFormat
  verbosity?: string
  store: boolean
  previousResponseId?: string
  /** The stored row it continues (a new row links it). */
  previous?: ThreadHead | null
  conversation?: string
  /** The Conversations API's conversation (`conv_…`) the turn is in: its input and output are added to it. */
  conversationId?: string
  maxToolCalls?: number
  /** The gateway's state is involved: the upstream gets the whole input and `store: false`. */
  stateful: boolean
  /** Some `item_reference` was one of the gateway's own items, replaced in `items` by it. */
  referenced?: boolean
  /** The code interpreter containers it names by id (the pipeline checks them: containers/check.ts). */
  containers?: NamedContainer[]
}
