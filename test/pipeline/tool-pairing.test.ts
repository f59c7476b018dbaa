// Tool loops taken apart at random (a message or item left out, doubled or moved, a block left
// out, a call's or a result's id changed) and sent through a surface to the other family's model: each
// one the gateway accepts must reach that upstream paired as it requires (OpenAI: a tool message
// answers a call of the assistant message before it, and each call is answered before the
// conversation goes on; Anthropic: each tool_result answers a tool_use of the message before it,
// and each tool_use is answered in the next message). Otherwise the upstream's refusal would name
// the translated messages, not the client's. Seeded, so a failure reproduces.
import { describe, expect, test } from 'bun:test'
import { HttpError } from '../../src/http/errors.ts'
import { UpstreamError } from '../../src/providers/types.ts'
import { toAnthropicMessages } from '../../src/providers/anthropic/request.ts'
import { toOpenAIChat } from '../../src/providers/openai/request.ts'
import { resolveModel } from '../../src/routing/router.ts'
import { itemsToMessages } from '../../src/surfaces/responses/decode.ts'
import { checkCallAnswers, checkTurns } from '../../src/surfaces/responses/call-answers.ts'
import { inputItems } from '../../src/surfaces/responses/items.ts'
import { catalog, decode as decodeChat } from '../chat/helpers.ts'
import { decode as decodeMessages } from '../messages/helpers.ts'

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
}

type Json = any
const IDS = ['c1', 'c2', 't1', 't2', 'zz']

/** One structural change to a conversation: what a client that lost track of its tool loop sends. */
function mutate(messages: Json[], rand: () => number): Json[] {
  const out: Json[] = structuredClone(messages)
  const at = Math.floor(rand() * out.length)
  const m = out[at]
  switch (Math.floor(rand() * 5)) {
    case 0:
      out.splice(at, 1)
      break
    case 1:
      out.splice(at, 0, structuredClone(m))
      break
    case 2:
      if (at + 1 < out.length) [out[at], out[at + 1]] = [out[at + 1], out[at]]
      break
    case 3:
      if (Array.isArray(m.content) && m.content.length > 1) m.content.splice(Math.floor(rand() * m.content.length), 1)
      else if (Array.isArray(m.tool_calls) && m.tool_calls.length > 1) m.tool_calls.splice(Math.floor(rand() * m.tool_calls.length), 1)
      break
    default: {
      const id = IDS[Math.floor(rand() * IDS.length)]
      if (typeof m.tool_call_id === 'string') m.tool_call_id = id
      else if (typeof m.call_id === 'string') m.call_id = id
      else if (Array.isArray(m.tool_calls)) m.tool_calls[Math.floor(rand() * m.tool_calls.length)].id = id
      else if (Array.isArray(m.content)) {
        const b = m.content.find((x: Json) => x.type === 'tool_use' || x.type === 'tool_result')
        if (b?.type === 'tool_use') b.id = id
        else if (b) b.tool_use_id = id
      }
    }
  }
  return out
}

const call = (id: string) => ({ id, type: 'function', function: { name: 'get', arguments: '{"q":1}' } })
const CHAT = {
  model: 'claude-sonnet-4-5',
  max_tokens: 400,
  tools: [{ type: 'function', function: { name: 'get', parameters: { type: 'object' } } }],
  messages: [
    { role: 'system', content: 's' },
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'x', tool_calls: [call('c1'), call('c2')] },
    { role: 'tool', tool_call_id: 'c1', content: 'r1' },
    { role: 'tool', tool_call_id: 'c2', content: 'r2' },
    { role: 'user', content: 'b' },
    { role: 'assistant', content: null, tool_calls: [call('c3')] },
    { role: 'tool', tool_call_id: 'c3', content: 'r3' },
    { role: 'assistant', content: 'y' },
    { role: 'user', content: 'c' },
  ],
}
const use = (id: string) => ({ type: 'tool_use', id, name: 'get', input: { q: 1 } })
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'r' })
const MESSAGES = {
  model: 'gpt-4o',
  max_tokens: 400,
  tools: [{ name: 'get', input_schema: { type: 'object' } }],
  messages: [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: [{ type: 'text', text: 'x' }, use('t1'), use('t2')] },
    { role: 'user', content: [result('t1'), result('t2'), { type: 'text', text: 'b' }] },
    { role: 'assistant', content: [use('t3')] },
    { role: 'tool', tool_use_id: 't3', content: 'r3' },
    { role: 'assistant', content: 'y' },
    { role: 'user', content: 'c' },
  ],
}

function anthropicProblems(messages: Json[]): string[] {
  const p: string[] = []
  messages.forEach((m, i) => {
    if (i > 0 && m.role === messages[i - 1].role) p.push(`messages[${i}]: a second ${m.role} message in a row`)
    const blocks: Json[] = Array.isArray(m.content) ? m.content : []
    for (const b of blocks) if (b.type === 'text' && b.text === '') p.push(`messages[${i}]: an empty text block`)
    const results = blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)
    const before: Json[] = Array.isArray(messages[i - 1]?.content) ? messages[i - 1].content : []
    for (const id of results) if (!before.some((b) => b.type === 'tool_use' && b.id === id)) p.push(`messages[${i}]: tool_result ${id} answers no tool_use of the message before it`)
    const next = messages[i + 1]
    if (!next) return
    const answered: Json[] = Array.isArray(next.content) ? next.content : []
    for (const b of blocks) if (b.type === 'tool_use' && !answered.some((r) => r.type === 'tool_result' && r.tool_use_id === b.id)) p.push(`messages[${i}]: tool_use ${b.id} unanswered in the next message`)
  })
  return p
}

function openAIProblems(messages: Json[]): string[] {
  const p: string[] = []
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      let j = i - 1
      while (j >= 0 && messages[j].role === 'tool') j--
      if (j < 0 || !messages[j].tool_calls?.some((c: Json) => c.id === m.tool_call_id)) p.push(`messages[${i}]: tool message ${m.tool_call_id} answers no call before it`)
    }
    if (m.role !== 'assistant' || !m.tool_calls?.length) return
    const answers: string[] = []
    let j = i + 1
    for (; j < messages.length && messages[j].role === 'tool'; j++) answers.push(messages[j].tool_call_id)
    if (j === messages.length) return
    for (const c of m.tool_calls) if (!answers.includes(c.id)) p.push(`messages[${i}]: call ${c.id} unanswered before the conversation goes on`)
  })
  return p
}

/** Tries `n` mutated bodies; the problems of the translated bodies of those accepted, and how many were. */
function sweep(n: number, seed: number, base: Json, translate: (raw: Json) => Json[], problems: (m: Json[]) => string[]) {
  const rand = rng(seed)
  const found: string[] = []
  let accepted = 0
  for (let i = 0; i < n; i++) {
    let messages = base.messages
    for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) messages = mutate(messages, rand)
    let sent: Json[]
    try {
      sent = translate({ ...base, messages })
    } catch (e) {
      if ((e instanceof HttpError || e instanceof UpstreamError) && e.status === 400) continue
      throw e
    }
    accepted++
    for (const p of problems(sent)) found.push(`${p} — sent ${JSON.stringify(messages).slice(0, 400)}`)
  }
  return { found, accepted }
}

const fc = (id: string) => ({ type: 'function_call', call_id: id, name: 'get', arguments: '{"q":1}' })
const fco = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'r' })
const RESPONSES = {
  messages: [
    { role: 'user', content: 'a' }, fc('c1'), fc('c2'), fco('c1'), fco('c2'),
    { role: 'assistant', content: [{ type: 'output_text', text: 'y' }] },
    { role: 'user', content: 'b' }, fc('c3'), fco('c3'), { role: 'user', content: 'c' },
  ],
}
const IR_TOOLS = [{ name: 'get', parameters: { type: 'object' } }]
const CLAUDE = resolveModel(catalog, 'claude-sonnet-4-5', 'responses')

/** A Responses turn's input as the surface checks it and turnStart builds its messages (no thread). */
function responsesToClaude(raw: Json): Json[] {
  const items = inputItems(raw.messages)
  checkCallAnswers([], items, (i) => `input[${i}].call_id`, 'previous_response_id')
  const places = new Map()
  const messages = itemsToMessages(items, 'input', undefined, CLAUDE.id, places)
  checkTurns(messages, places, CLAUDE.id)
  return toAnthropicMessages({ model: CLAUDE.id, messages, stream: false, maxTokens: 400, tools: IR_TOOLS }, CLAUDE).body.messages as Json[]
}

describe('a tool loop taken apart reaches the other family paired, or is a 400', () => {
  test('chat → a Claude model', () => {
    const { found, accepted } = sweep(1500, 20261206, CHAT, (raw) => {
      const { ir, model } = decodeChat(raw, 'translate')
      return toAnthropicMessages(ir, model).body.messages as Json[]
    }, anthropicProblems)
    expect(found.slice(0, 3)).toEqual([])
    // the sweep is not all refusals: at least a fifth of it reaches the upstream
    expect(accepted).toBeGreaterThan(300)
  })
  test('messages → a GPT model', () => {
    const { found, accepted } = sweep(1500, 20261207, MESSAGES, (raw) => {
      const { ir, model } = decodeMessages(raw, 'translate')
      return toOpenAIChat(ir, { upstreamId: model.upstreamId, reasoning: false }).body.messages as Json[]
    }, openAIProblems)
    expect(found.slice(0, 3)).toEqual([])
    expect(accepted).toBeGreaterThan(300)
  })
  test('responses → a Claude model', () => {
    const { found, accepted } = sweep(1500, 20261208, RESPONSES, responsesToClaude, anthropicProblems)
    expect(found.slice(0, 3)).toEqual([])
    expect(accepted).toBeGreaterThan(300)
  })
})
