// Custom tools on the chat surface (free-form input, held to a grammar where one is given), as
// the current Chat Completions API has them, with `tool_choice` naming one and `allowed_tools`.
// A GPT model's upstream gets them as they came. A model that knows only functions (a Claude
// model, the mock) is offered each as a function taking one string, and its call comes back
// as a custom tool call with that string as the input, in JSON and in a stream.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let up: FakeUpstream
let gw: Gateway
const client = () => new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })

const grep = { type: 'custom' as const, custom: { name: 'grep', description: 'search the tree', format: { type: 'grammar' as const, grammar: { syntax: 'lark' as const, definition: 'start: /[a-z *.]+/' } } } }
const fn = { type: 'function' as const, function: { name: 'f', parameters: { type: 'object', properties: {} } } }
const tools = [grep, fn]
const ask = (text: string) => [{ role: 'user' as const, content: text }]

beforeAll(async () => {
  up = await startFakeUpstream()
  gw = await startGateway({ env: upstreamEnv(up) })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

describe('a model that knows only functions (the mock, either family)', () => {
  for (const model of ['mock-gpt', 'mock-claude']) {
    test(`${model}: the call comes back as a custom tool call, in JSON and streamed`, async () => {
      const r = await client().chat.completions.create({ model, messages: ask('mock: tool grep {"input":"needle in *.ts"}'), tools })
      expect(r.choices[0]!.finish_reason).toBe('tool_calls')
      expect(r.choices[0]!.message.tool_calls).toEqual([{ id: expect.any(String), type: 'custom', custom: { name: 'grep', input: 'needle in *.ts' } }])
      const streamed = await client().chat.completions.stream({ model, messages: ask('mock: tool grep {"input":"needle in *.ts"}'), tools }).finalChatCompletion()
      expect(streamed.choices[0]!.message.tool_calls).toEqual([{ id: expect.any(String), type: 'custom', custom: { name: 'grep', input: 'needle in *.ts' } }])
    })

    test(`${model}: the call sent back with its result continues the turn`, async () => {
      const call = { id: 'call_1', type: 'custom' as const, custom: { name: 'grep', input: 'x' } }
      const r = await client().chat.completions.create({
        model, tools,
        messages: [...ask('find x'), { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'found 3' }],
      })
      expect(r.choices[0]!.message.content).toBe('tool result: found 3')
    })

    test(`${model}: tool_choice names a custom tool; allowed_tools leaves only the tools it lists`, async () => {
      const forced = await client().chat.completions.create({ model, messages: ask('hi'), tools, tool_choice: { type: 'custom', custom: { name: 'grep' } } })
      expect(forced.choices[0]!.message.tool_calls?.[0]).toMatchObject({ type: 'custom', custom: { name: 'grep' } })
      const allowed = await client().chat.completions.create({ model, messages: ask('hi'), tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'f' } }] } } })
      expect(allowed.choices[0]!.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'f' } })
    })
  }
})

test('a Claude model upstream: offered a function of one string, described with its grammar; its call a custom one', async () => {
  up.script({ json: { ...fixtureJson('anthropic/messages/nonstream-text.json'), content: [{ type: 'tool_use', id: 'toolu_1', name: 'grep', input: { input: 'needle' } }], stop_reason: 'tool_use' } })
  const r = await client().chat.completions.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: ask('find the needle'), tools, tool_choice: { type: 'custom', custom: { name: 'grep' } } })
  const sent = up.requests.at(-1)!.json()
  expect(sent.tools[0]).toMatchObject({ name: 'grep', input_schema: { type: 'object', required: ['input'], properties: { input: { type: 'string' } } } })
  expect(sent.tools[0].input_schema.properties.input.description).toContain('start: /[a-z *.]+/')
  expect(sent.tool_choice).toMatchObject({ type: 'tool', name: 'grep' })
  expect(r.choices[0]!.message.tool_calls).toEqual([{ id: 'toolu_1', type: 'custom', custom: { name: 'grep', input: 'needle' } }])
})

test("a GPT model's upstream gets custom tools and the new tool choices as they came, and its custom call is relayed", async () => {
  const reply = fixtureJson('openai/chat/nonstream-text.json')
  const call = { id: 'call_up', type: 'custom' as const, custom: { name: 'grep', input: 'needle' } }
  up.script({ json: { ...reply, choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls', logprobs: null }] } })
  const choice = { type: 'allowed_tools' as const, allowed_tools: { mode: 'auto' as const, tools: [{ type: 'custom' as const, custom: { name: 'grep' } }] } }
  const r = await client().chat.completions.create({ model: 'gpt-4o', messages: ask('find the needle'), tools, tool_choice: choice })
  const sent = up.requests.at(-1)!.json()
  expect(sent.tools).toEqual(tools)
  expect(sent.tool_choice).toEqual(choice)
  expect(r.choices[0]!.message.tool_calls).toEqual([call])
})

test('bad custom tools and choices are 400s naming the field', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ tools: [{ type: 'custom', custom: {} }] }, 'tools[0].custom.name'],
    [{ tools: [{ type: 'webhook' }] }, 'tools[0].type'],
    [{ tools: [grep, { type: 'custom', custom: { name: 'grep' } }] }, 'tools[1].custom.name: duplicate'],
    [{ tools, tool_choice: { type: 'custom', custom: { name: 'nope' } } }, 'tool_choice.custom.name'],
    [{ tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'custom', custom: { name: 'f' } }] } } }, 'tool_choice.allowed_tools.tools[0].custom.name'],
    [{ tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'sometimes', tools: [fn] } } }, 'tool_choice.allowed_tools.mode'],
    [{ messages: [...ask('x'), { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'grep' } }] }] }, 'messages[1].tool_calls[0].custom.input'],
    // a model that knows only functions reads the grammar into the tool's description: one of the wrong shape went without a word
    [{ tools: [{ type: 'custom', custom: { name: 'g', format: { type: 'regex' } } }] }, 'tools[0].custom.format.type: expected "text" or "grammar"'],
    [{ tools: [{ type: 'custom', custom: { name: 'g', format: { type: 'grammar', grammar: { syntax: 'lark', definition: 5 } } } }] }, 'tools[0].custom.format.grammar.definition'],
    [{ tools: [{ type: 'custom', custom: { name: 'g', format: { type: 'grammar' } } }] }, 'tools[0].custom.format.syntax'],
  ]
  for (const [extra, field] of cases) {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages: ask('hi'), ...extra }),
    })
    expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([400, expect.stringContaining(field)])
  }
})
