// Servers of the chat wire other than OpenAI's (vLLM, Ollama, Mistral, OpenRouter, llama.cpp)
// send some things in other shapes: reasoning under `reasoning`, content as a list of parts,
// tool arguments as an object, every parallel call at index 0, a call's id or name in a later
// piece, a named tool's call ended with `stop`. Each is read as OpenAI's own shape would be,
// streamed and not: before, reasoning was lost, calls were merged or named '', a list of parts
// failed the stream, and a forced call reached Anthropic clients as `end_turn`.
import { describe, expect, test } from 'bun:test'
import { withBlocks } from '../../src/ir/blocks.ts'
import { collect } from '../../src/ir/collect.ts'
import type { GenerationResponse } from '../../src/ir/types.ts'
import { withCountedUsage } from '../../src/providers/openai/counted-usage.ts'
import { fromOpenAIChat } from '../../src/providers/openai/response.ts'
import { openAIChatEvents } from '../../src/providers/openai/stream.ts'
import { parseSse } from '../../src/providers/sse.ts'

type Obj = Record<string, unknown>
const chunk = (delta: Obj | null, finish: string | null = null) => `data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const usage = `data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`

/** The reply a stream of these deltas makes, through the block normalizer as every encoder reads it. */
async function streamed(deltas: (Obj | null)[], finish = 'stop'): Promise<GenerationResponse> {
  const sse = deltas.map((d) => chunk(d)).join('') + chunk({}, finish) + usage + 'data: [DONE]\n\n'
  return collect(withBlocks(openAIChatEvents(parseSse(new Response(sse).body!))))
}
const plain = (message: Obj, finish = 'stop') => fromOpenAIChat({ id: 'chatcmpl-c', model: 'm', choices: [{ index: 0, message, finish_reason: finish }] } as never)
const call = (o: Obj) => ({ tool_calls: [o] })
const fn = (name: string | undefined, args: unknown) => ({ function: { ...(name === undefined ? {} : { name }), arguments: args } })

describe('what other servers of the chat wire send, read as OpenAI would send it', () => {
  test('reasoning under `reasoning` is the thinking `reasoning_content` would be', async () => {
    const r = await streamed([{ role: 'assistant', content: '', reasoning: 'Let me think.' }, { reasoning: ' 4.' }, { content: 'It is 4.' }])
    expect(r.content).toEqual([{ type: 'reasoning', text: 'Let me think. 4.' }, { type: 'text', text: 'It is 4.' }])
    expect(plain({ role: 'assistant', content: 'It is 4.', reasoning: 'Let me think.' }).content[0]).toEqual({ type: 'reasoning', text: 'Let me think.' })
    // a server that sends both names, alike, says it once
    expect(plain({ content: 'x', reasoning: 'r', reasoning_content: 'r' }).content[0]).toEqual({ type: 'reasoning', text: 'r' })
  })

  test('content as a list of text parts is its text joined; arguments as an object are their JSON', async () => {
    const r = await streamed([{ role: 'assistant', content: [{ type: 'text', text: 'Hel' }] }, { content: [{ type: 'text', text: 'lo' }] }])
    expect(r.content).toEqual([{ type: 'text', text: 'Hello' }])
    expect(plain({ content: [{ type: 'text', text: 'Hel' }, { type: 'text', text: 'lo' }] }).content).toEqual([{ type: 'text', text: 'Hello' }])
    const args = { location: 'Paris' }
    const s = await streamed([call({ index: 0, id: 'call_1', type: 'function', ...fn('get_weather', args) })], 'tool_calls')
    expect(s.content).toEqual([{ type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: JSON.stringify(args) }])
    expect(plain({ content: null, tool_calls: [{ id: 'call_1', type: 'function', ...fn('get_weather', args) }] }, 'tool_calls').content).toEqual(s.content)
  })

  test('parallel calls all at index 0 (Ollama), told apart by their ids', async () => {
    const r = await streamed([
      call({ index: 0, id: 'call_1', type: 'function', ...fn('get_weather', '{"location":"Paris"}') }),
      call({ index: 0, id: 'call_2', type: 'function', ...fn('get_weather', '{"location":') }),
      call({ index: 0, ...fn(undefined, '"Tokyo"}') }),
    ], 'tool_calls')
    expect(r.content.map((p) => (p.type === 'tool-call' ? [p.id, p.arguments] : p))).toEqual([['call_1', '{"location":"Paris"}'], ['call_2', '{"location":"Tokyo"}']])
  })

  test("a call's name in pieces, or its name or id in a later piece, is the call's", async () => {
    const one = async (pieces: Obj[]) => (await streamed(pieces.map(call), 'tool_calls')).content
    const want = (id: string) => [{ type: 'tool-call' as const, id, name: 'get_weather', arguments: '{"location":"Paris"}' }]
    expect(await one([{ index: 0, id: 'call_1', ...fn('get_', '') }, { index: 0, ...fn('weather', '{"location":"Paris"}') }])).toEqual(want('call_1'))
    expect(await one([{ index: 0, id: 'call_1', ...fn(undefined, '') }, { index: 0, ...fn('get_weather', '{"location":"Paris"}') }])).toEqual(want('call_1'))
    expect(await one([{ index: 0, ...fn('get_weather', '') }, { index: 0, id: 'call_late', ...fn(undefined, '{"location":"Paris"}') }])).toEqual(want('call_late'))
    // no index at all, the id with the arguments: still one call
    expect(await one([{ ...fn('get_weather', '') }, { id: 'call_9', ...fn(undefined, '{"location":"Paris"}') }])).toEqual(want('call_9'))
    // an id that changes from piece to piece of one call (Poolside: another after the first;
    // some proxies: a new one each piece) does not begin a call; the first is the call's
    expect(await one([{ index: 0, id: 'call_1', ...fn('get_weather', '') }, { index: 0, id: 'call_B', ...fn(undefined, '{"location":"Paris"}') }])).toEqual(want('call_1'))
    expect(await one([{ index: 0, id: 'call_1', ...fn('get_weather', '{"loc') }, { index: 0, id: 'call_2', ...fn(undefined, 'ation":"Paris"}') }])).toEqual(want('call_1'))
    expect(await one([{ index: 0, ...fn('get_weather', '{"loc') }, { index: 0, id: 'call_late', ...fn(undefined, 'ation":"Paris"}') }])).toEqual(want('call_chatcmpl-c_0'))
    // a name repeated whole in every piece is taken once
    expect(await one([{ index: 0, id: 'call_1', ...fn('get_weather', '') }, { index: 0, ...fn('get_weather', '{"location":"Paris"}') }])).toEqual(want('call_1'))
  })

  test('calls ended with `stop` (a call tool_choice named) end as calls', async () => {
    const r = await streamed([call({ index: 0, id: 'call_1', type: 'function', ...fn('get_weather', '{}') })], 'stop')
    expect(r.finish.reason).toBe('tool_calls')
    expect(plain({ content: null, tool_calls: [{ id: 'call_1', type: 'function', ...fn('get_weather', '{}') }] }, 'stop').finish.reason).toBe('tool_calls')
    // an answer is still an answer
    expect((await streamed([{ content: 'hi' }])).finish.reason).toBe('stop')
  })

  test('the legacy function_call is counted as output when the server sends no usage', async () => {
    const body = { id: 'chatcmpl-f', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"location":"Paris, France, Europe"}' } }, finish_reason: 'function_call' }] }
    const res = await withCountedUsage(new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } }), () => 'weather?')
    const j = await res.json()
    expect(j.usage.completion_tokens).toBeGreaterThan(5)
    expect(j.choices[0].message.tool_calls).toBeUndefined()
  })
})
