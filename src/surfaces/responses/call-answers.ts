// Tool outputs and the calls they answer, as OpenAI pairs them on the Responses surface. Checked
// on the client's items and the thread they continue, so a 400 names the client's field
// whichever model the turn goes to: a Claude model was handed such a turn in Anthropic's terms
// (the translated messages' indices), and the mock answered it.
import { badRequest } from '../../http/errors.ts'
import { quotedIds } from '../checks.ts'
import type { Message, Part } from '../../ir/types.ts'
import type { Item } from './items.ts'

/** Items that may stand for calls the gateway cannot see (OpenAI's store, an encrypted compaction, a program's own calls). */
const HIDING: ReadonlySet<string> = new Set(['item_reference', 'compaction', 'program', 'program_output'])

const OUTPUTS: ReadonlySet<string> = new Set(['function_call_output', 'custom_tool_call_output'])
const CALLS: ReadonlySet<string> = new Set(['function_call', 'custom_tool_call'])

const callIdOf = (it: Item): string | undefined => (typeof it.call_id === 'string' ? it.call_id : undefined)

/**
 * Each `function_call_output` / `custom_tool_call_output` names a call of the thread or of the
 * input, and each call has its output before the conversation goes on past it (a user, system
 * or developer message after it), as OpenAI requires. Calls not yet answered at the end are the
 * client's to run next. `idOf(i)` names the client's field of `items[i]`'s call id (`input[3].call_id`,
 * `messages[2].tool_call_id`; the item's own field if it holds none); `threadField` the parameter
 * that named the thread (`previous_response_id`, `conversation`).
 */
export function checkCallAnswers(history: Item[], items: Item[], idOf: (i: number) => string, threadField: string): void {
  if (history.some((it) => HIDING.has(it.type)) || items.some((it) => HIDING.has(it.type))) return
  const calls = new Set<string>()
  const answered = new Set<string>()
  for (const it of [...history, ...items]) {
    const id = callIdOf(it)
    if (id === undefined) continue
    // any call a client answers (a hosted tool's too) counts, so only a call named nowhere is refused
    if (it.type.endsWith('_call')) calls.add(id)
    if (OUTPUTS.has(it.type)) answered.add(id)
  }
  items.forEach((it, i) => {
    const id = callIdOf(it)
    if (id !== undefined && OUTPUTS.has(it.type) && !calls.has(id)) {
      throw badRequest(`${idOf(i)}: ${quotedIds([id])} answers no call of this input or of the response it continues`)
    }
  })
  const openCall = (it: Item) => {
    const id = callIdOf(it)
    return id !== undefined && CALLS.has(it.type) && !answered.has(id) ? id : undefined
  }
  // the item itself: its call id's field less the id's own name
  const itemOf = (i: number) => idOf(i).replace(/\.(call_id|tool_call_id|id)$/, '')
  const goesOn = (it: Item) => it.type === 'message' && it.role !== 'assistant'
  let open: { id: string; at: string } | undefined
  // the thread's own turns were judged when they were sent: only the calls it ends with are open
  for (const it of history) {
    if (goesOn(it)) open = undefined
    const id = openCall(it)
    if (id !== undefined) open ??= { id, at: threadField }
  }
  items.forEach((it, i) => {
    if (open && goesOn(it)) {
      throw badRequest(`${open.at}: call ${quotedIds([open.id])} has no output (a function_call_output or custom_tool_call_output naming it) before ${itemOf(i)}, where the conversation goes on`)
    }
    const id = openCall(it)
    if (id !== undefined) open ??= { id, at: idOf(i) }
  })
}

/**
 * A model reached through the IR (a Claude model, the mock, a chat-only upstream) is sent a tool
 * loop as turns: each call's output in the turn right after the one that made it. An output of
 * the input found elsewhere (after another turn began, or before its call), or a call of the input
 * whose turn is followed by something other than its outputs, cannot be sent so: a 400 naming the
 * client's item (`places`). The thread's own turns are not judged again.
 */
export function checkTurns(messages: Message[], places: Map<Part, string>, modelId: string): void {
  if (places.size === 0) return
  // the call ids each turn makes or answers, read once (a turn may hold thousands)
  const seen = new Map<Message, Set<string>>()
  const idsOf = (m: Message) => {
    let ids = seen.get(m)
    if (!ids) seen.set(m, (ids = new Set(m.content.flatMap((p) => (p.type === 'tool-call' ? [p.id] : p.type === 'tool-result' ? [p.toolCallId] : [])))))
    return ids
  }
  const calls = (m: Message | undefined, id: string) => m?.role === 'assistant' && idsOf(m).has(id)
  const answers = (m: Message | undefined, id: string) => m?.role === 'tool' && idsOf(m).has(id)
  messages.forEach((m, i) => {
    for (const p of m.content) {
      const at = places.get(p)
      if (at === undefined) continue
      if (p.type === 'tool-result' && !calls(messages[i - 1], p.toolCallId)) {
        throw badRequest(`${at}.call_id: the output of call ${quotedIds([p.toolCallId])} is not in the turn right after the one that made the call; ${modelId} takes each output there (send it beside that turn's other outputs, before anything else)`)
      }
      if (p.type === 'tool-call' && i + 1 < messages.length && !answers(messages[i + 1], p.id)) {
        throw badRequest(`${at}.call_id: call ${quotedIds([p.id])} has no output in the turn right after it; ${modelId} takes each output there (send it beside that turn's other outputs, before anything else)`)
      }
    }
  })
}
