// Tool results and the calls they answer, as Anthropic pairs them. Checked on the client's own
// messages, so a 400 names the client's field whichever model the request goes to: a GPT model
// was handed such a turn in OpenAI's terms (the translated turn's indices), and the mock took it.
import { badRequest } from '../../http/errors.ts'
import { quotedIds } from '../checks.ts'
import type { MessagesMessage } from './schema.ts'

interface Answer {
  id: string
  at: string
}

/** One side's consecutive messages: Anthropic joins them into one turn; `system` messages stand aside. */
interface Turn {
  side: 'assistant' | 'user'
  /** Index of each message of the turn. */
  at: number[]
}

const sideOf = (m: MessagesMessage): Turn['side'] | undefined => (m.role === 'system' ? undefined : m.role === 'assistant' ? 'assistant' : 'user')

function turnsOf(messages: MessagesMessage[]): Turn[] {
  const turns: Turn[] = []
  messages.forEach((m, i) => {
    const side = sideOf(m)
    if (!side) return
    const last = turns.at(-1)
    if (last?.side === side) last.at.push(i)
    else turns.push({ side, at: [i] })
  })
  return turns
}

/** The `tool_use` ids an assistant message calls, with the message each is in (server tools answer themselves). */
function callsOf(messages: MessagesMessage[], turn: Turn): Map<string, number> {
  const calls = new Map<string, number>()
  for (const i of turn.at) {
    const c = messages[i]!.content
    if (Array.isArray(c)) for (const b of c) if (b.type === 'tool_use' && !calls.has(b.id)) calls.set(b.id, i)
  }
  return calls
}

/** The results a user-side turn gives: `tool_result` blocks, and a `tool` message naming its call. */
function answersOf(messages: MessagesMessage[], turn: Turn): Answer[] {
  const answers: Answer[] = []
  for (const i of turn.at) {
    const m = messages[i]!
    const named = m.tool_use_id ?? m.tool_call_id
    if (m.role === 'tool' && typeof named === 'string') {
      answers.push({ id: named, at: `messages[${i}].${m.tool_use_id !== undefined ? 'tool_use_id' : 'tool_call_id'}` })
      continue
    }
    if (Array.isArray(m.content)) {
      m.content.forEach((b, j) => {
        if (b.type === 'tool_result') answers.push({ id: b.tool_use_id, at: `messages[${i}].content[${j}].tool_use_id` })
      })
    }
  }
  return answers
}

/**
 * Each tool result answers a `tool_use` of the assistant turn just before it, and each
 * `tool_use` is answered in the next turn when the conversation goes on, as Anthropic requires.
 * An assistant turn that ends the conversation may leave its calls open (the client runs them
 * next). In a message thread that continues (`threaded`) the first turn may answer calls Anthropic holds.
 */
export function checkToolAnswers(messages: MessagesMessage[], threaded: boolean): void {
  const turns = turnsOf(messages)
  turns.forEach((turn, k) => {
    if (turn.side !== 'user') return
    const before = turns[k - 1]
    if (!before && threaded) return
    const calls = before ? callsOf(messages, before) : new Map<string, number>()
    const open = new Map(calls)
    for (const a of answersOf(messages, turn)) {
      if (!calls.has(a.id)) throw badRequest(`${a.at}: ${quotedIds([a.id])} answers no tool_use of the assistant message before it`)
      open.delete(a.id)
    }
    if (open.size === 0) return
    const [first] = open.values()
    const ids = quotedIds(open.keys())
    const one = open.size === 1
    throw badRequest(`messages[${first}].content: tool_use ${ids} ${one ? 'has' : 'have'} no tool_result answering ${one ? 'it' : 'them'} in the next message, messages[${turn.at[0]}]`)
  })
}
