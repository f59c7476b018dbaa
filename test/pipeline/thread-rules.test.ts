// Responses threads whose turns move between GPT and Claude models, continued by
// previous_response_id (the gateway's thread) or by a store:false client that carries its items
// back, the upstream answering each turn with random output (reasoning with encrypted content,
// thinking, text, parallel calls). Every body the gateway sends must be one its upstream takes
// (test/helpers/upstream-rules.ts), and a reasoning model's reasoning must go back to it on the
// next turn of its thread, as OpenAI's own store would send it: the gateway lost it between a
// call and its output before it asked for the encrypted reasoning of the replies it keeps.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { NO_LIMITS } from '../batches/helpers.ts'
import { startFakeUpstream, upstreamEnv, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { seeded, type Seeded } from '../helpers/seeded.ts'
import { anthropicBreaks, openaiResponsesBreaks } from '../helpers/upstream-rules.ts'
import { responsesStream } from '../helpers/upstream-streams.ts'
import { messageFrames } from '../messages/e2e-helpers.ts'

type Json = any
const TOOLS = ['get_weather', 'add', 'search_docs']
const MODELS = ['gpt-5', 'gpt-5.1', 'o3', 'gpt-4o', 'claude-sonnet-4-5', 'claude-opus-4-5']
const reasons = (model: string) => /^(o\d|gpt-5)/.test(model)

let up: FakeUpstream
let gw: Gateway
let r: Seeded
let n = 0
const uid = () => `${(n++).toString(36)}x${r.count(1e9).toString(36)}`

/** A Responses reply of OpenAI's: reasoning before a reasoning model's output, its content only when asked. */
function openaiReply(b: Json): Json {
  const encrypted = (b.include ?? []).includes('reasoning.encrypted_content')
  const reasoning = () => ({ type: 'reasoning', id: `rs_${uid()}`, summary: [], ...(encrypted ? { encrypted_content: `gAAAAB${uid()}` } : {}) })
  const output: Json[] = []
  if (reasons(b.model) && r.chance(0.8)) output.push(reasoning())
  const calls = b.tools?.length && r.chance(0.5) ? 1 + r.count(2) : 0
  if (calls === 0 || r.chance(0.5)) output.push({ type: 'message', id: `msg_${uid()}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: r.pick(['Sure.', 'Done.']), annotations: [] }] })
  for (let k = 0; k < calls; k++) {
    if (reasons(b.model) && k > 0 && r.chance(0.5)) output.push(reasoning())
    output.push({ type: 'function_call', id: `fc_${uid()}`, call_id: `call_${uid()}`, name: r.pick(TOOLS), arguments: r.pick(['{}', '{"a":1}']), status: 'completed' })
  }
  return { id: `resp_${uid()}`, object: 'response', created_at: 1, status: 'completed', model: b.model, output, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } }
}

/** A Messages reply of Anthropic's: thinking first when it is on, then text and calls. */
function anthropicReply(b: Json): Json {
  const content: Json[] = []
  if (b.thinking && b.thinking.type !== 'disabled' && r.chance(0.8)) content.push({ type: 'thinking', thinking: 'Let me see.', signature: `EqQB${uid()}` })
  const calls = b.tools?.length && r.chance(0.5) ? 1 + r.count(2) : 0
  if (calls === 0 || r.chance(0.5)) content.push({ type: 'text', text: r.pick(['Sure.', 'Done.']) })
  for (let k = 0; k < calls; k++) content.push({ type: 'tool_use', id: `toolu_${uid()}`, name: r.pick(b.tools.map((t: Json) => t.name)), input: r.pick([{}, { a: 1 }]) })
  return { id: `msg_${uid()}`, type: 'message', role: 'assistant', model: b.model, content, stop_reason: calls ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }
}

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req: RecordedRequest) => {
    const b = req.json()
    if (req.path.endsWith('/messages')) return { json: anthropicReply(b) }
    const reply = openaiReply(b)
    return b.stream === true ? { sse: responsesStream(reply) } : { json: reply }
  })
  gw = await startGateway({ env: { ...NO_LIMITS, ...upstreamEnv(up) } })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

test('threads across families: every body an upstream takes, and a reasoning model gets its reasoning back', async () => {
  r = seeded(23)
  const broken: string[] = []
  let turns = 0
  let carried = 0
  for (let t = 0; t < 60; t++) {
    const store = r.chance(0.5)
    const tools = r.chance(0.8) ? TOOLS.map((name) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } })) : undefined
    let prev: Json | undefined
    let history: Json[] = []
    let model = r.pick(MODELS)
    for (let k = 1 + r.count(5); k > 0; k--) {
      // a thread mostly keeps its model, and now and then moves to another
      if (r.chance(0.4)) model = r.pick(MODELS)
      const items: Json[] = (prev?.output ?? []).filter((o: Json) => o.type === 'function_call').map((c: Json) => ({ type: 'function_call_output', call_id: c.call_id, output: r.pick(['ok', '']) }))
      if (!items.length || r.chance(0.5)) items.push({ role: 'user', content: r.pick(['hi', 'go on']) })
      const body: Json = {
        model,
        input: store ? items : [...history, ...items],
        ...(store ? (prev ? { previous_response_id: prev.id } : {}) : { store: false, include: ['reasoning.encrypted_content'] }),
        ...(tools ? { tools } : {}),
        ...(reasons(model) || (model.startsWith('claude') && r.chance(0.5)) ? { reasoning: { effort: r.pick(['low', 'high']) } } : {}),
        ...(r.chance(0.3) ? { instructions: 'be brief' } : {}),
        ...(!model.startsWith('claude') && r.chance(0.4) ? { stream: true } : {}),
      }
      const from = up.requests.length
      const res = await fetch(`${gw.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      const text = await res.text()
      expect({ status: res.status, text: res.status === 200 ? '' : text, body }).toMatchObject({ status: 200 })
      turns++
      const sent = up.requests.slice(from).map((x) => ({ path: x.path, json: x.json() }))
      for (const s of sent) for (const b of s.path.endsWith('/messages') ? anthropicBreaks(s.json) : openaiResponsesBreaks(s.json)) broken.push(`${b}\n  client: ${JSON.stringify(body)}\n  sent: ${JSON.stringify(s.json)}`)
      // the reasoning of the turn before, by the same model, goes back with it
      if (store && prev?.model === model && reasons(model)) {
        const input = sent.at(-1)!.json.input
        for (const it of prev.output.filter((o: Json) => o.type === 'reasoning')) {
          if (input.some((x: Json) => x.type === 'reasoning' && x.id === it.id && x.encrypted_content === it.encrypted_content)) carried++
          else broken.push(`the reasoning ${it.id} of the turn before did not go back\n  sent: ${JSON.stringify(input)}`)
        }
      }
      prev = body.stream ? messageFrames(text).at(-1)!.data.response : JSON.parse(text)
      history = [...body.input, ...prev.output]
    }
  }
  expect(broken.slice(0, 3)).toEqual([])
  // the threads were threads: turns continued, and reasoning went back (a check that saw nothing would pass anything)
  expect(turns).toBeGreaterThan(120)
  expect(carried).toBeGreaterThan(5)
})
