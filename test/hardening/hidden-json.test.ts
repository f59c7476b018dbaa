// JSON a client hides in a string of its body: a tool call's arguments, which a Claude model
// takes as an object, and the gateway's sealed reasoning sent back (a Claude model's thinking or
// web search in a reasoning item's `encrypted_content`, for a client that keeps the conversation
// itself). The body's checks see the string as text, and the gateway parses it on the request
// thread when it uses it, so it is held to the body's rules there: its parts counted against the
// body's bounds, for the request's hidden JSON together, before any parse, and its depth checked
// after. Arguments nested two million deep in 4 MB held the loop over a second and overflowed the
// stack as the request was encoded (a 502); fifty thousand deep in 100 KB did the same, and so did
// a sealed search whose content was. The count stands outside the strings: a custom tool's input
// (a patch, a CSV) may hold a million commas and goes on.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { jsonPartsOf, partsOf } from '../../src/http/parts.ts'
import { fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { leastGap } from '../helpers/loop-gap.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

/** Objects and arrays, and keys and array items, of a parsed value: what jsonPartsOf counts of its text. */
function counted(v: unknown): { nodes: number; values: number } {
  let nodes = 0
  let values = 0
  const stack = [v]
  while (stack.length > 0) {
    const x = stack.pop()
    if (typeof x !== 'object' || x === null) continue
    nodes++
    const children = Array.isArray(x) ? x : Object.values(x)
    // an empty container counts one entry (it has no comma to tell it has none)
    values += Math.max(1, children.length)
    stack.push(...children)
  }
  return { nodes, values }
}

describe('counting what stands outside strings', () => {
  const NONE = { nodes: Infinity, values: Infinity }
  test('equals the parts of the parsed value, whatever the strings hold', () => {
    const strings = ['', 'a,b', '[{,}]', 'say \\"[x]\\"', 'back\\\\', '\\\\\\"{', 'ünï,cödé', '"']
    let seed = 7
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
    const value = (depth: number): unknown => {
      const r = rnd()
      if (depth > 4 || r < 0.3) return rnd() < 0.5 ? strings[Math.floor(rnd() * strings.length)] : Math.floor(rnd() * 100)
      const n = 1 + Math.floor(rnd() * 4)
      if (r < 0.65) return Array.from({ length: n }, () => value(depth + 1))
      return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i},[${strings[i % strings.length]}`, value(depth + 1)]))
    }
    for (let i = 0; i < 300; i++) {
      const v = { a: value(0) }
      const text = JSON.stringify(v, null, i % 3 === 0 ? 1 : undefined)
      expect(jsonPartsOf(text, NONE)).toEqual(counted(JSON.parse(text)))
      // the quick count holds what strings hold too: never fewer
      const quick = partsOf(text, NONE) as { nodes: number; values: number }
      expect(quick.nodes).toBeGreaterThanOrEqual(counted(v).nodes)
    }
  })

  test('stops once past the bounds, as the quick count does', () => {
    expect(jsonPartsOf('['.repeat(1000) + ']'.repeat(1000), { nodes: 10, values: 1e9 })).toBe(true)
    expect(jsonPartsOf(JSON.stringify({ s: ','.repeat(1000) }), { nodes: 10, values: 10 })).toEqual({ nodes: 1, values: 1 })
  })
})

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script({ json: fixtureJson('anthropic/messages/nonstream-text.json') })
  gw = await startGateway({ env: { ...upstreamEnv(up), SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_IP_RPM: '100000' } })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const nested = (depth: number) => `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`
const wide = (n: number) => `{"a":[${Array(n).fill('{}').join(',')}]}`

type Answer = { code: number; error?: string; output_text?: string }

/** Two of `each` in one request are taken; a third is past the bounds, a 400 whose message begins with `named`. */
async function boundTogether(send: (hidden: string[]) => Promise<Answer>, each: string, named: string) {
  expect((await send([each, each])).code).toBe(200)
  const r = await send([each, each, each])
  expect(r.code).toBe(400)
  expect(r.error).toStartWith(named)
}

/** A chat request whose history holds one assistant tool call for each of `args`, to a Claude model. */
async function chat(args: string[]): Promise<Answer> {
  const calls = args.map((a, i) => ({ id: `c${i}`, type: 'function', function: { name: 'f', arguments: a } }))
  const messages = [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: calls }, ...calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'r' })), { role: 'user', content: 'go on' }]
  const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], messages }),
  })
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return { ...((await res.json()) as { error?: string }), code: res.status }
}

/** A Responses request to a Claude model, its conversation kept by the client. */
const responses = (tools: object[], input: object[]) =>
  fetch(`${gw.url}/api/alpha/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', store: false, tools, input }),
  })

describe("a tool call's arguments, for a Claude model", () => {
  test('nested past the body bounds: a 400 naming the call where the client wrote it, before any parse', async () => {
    const sent = up.requests.length
    const r = await chat([nested(2_000_000)])
    expect(r.code).toBe(400)
    expect(r.error).toStartWith('messages[1].tool_calls[0].function.arguments: tool call arguments hold more than 200000 JSON objects and arrays')
    expect(await leastGap(() => chat([nested(2_000_000)]))).toBeLessThan(200)
    expect(up.requests.length).toBe(sent)
  })

  test('nested past the body depth: a 400 naming the call', async () => {
    const r = await chat([nested(50_000)])
    expect(r.code).toBe(400)
    expect(r.error).toStartWith('messages[1].tool_calls[0].function.arguments: tool call arguments: a[0][0]')
    expect(r.error).toContain('nested more than 64 levels deep')
    expect((await chat([nested(60)])).code).toBe(200)
  })

  test("bounded for the request's tool calls together", async () => {
    await boundTogether(chat, wide(60_000), 'messages[1].tool_calls[2].function.arguments: tool call arguments hold more than')
  })

  test('a Responses call is named by its input item, which the request to Claude does not keep one for one', async () => {
    const send = async (item: object) => {
      const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }]
      const res = await responses(tools, [{ role: 'user', content: 'q' }, { role: 'user', content: 'more' }, item, { type: 'function_call_output', call_id: 'c1', output: 'r' }, { role: 'user', content: 'go on' }])
      const body = (await res.json()) as { error?: string }
      return { status: res.status, error: body.error }
    }
    const fn = await send({ type: 'function_call', call_id: 'c1', name: 'f', arguments: '[1]' })
    expect(fn).toEqual({ status: 400, error: 'input[2].arguments: tool call arguments must be a JSON object' })
    const deep = await send({ type: 'function_call', call_id: 'c1', name: 'f', arguments: nested(2_000_000) })
    expect(deep.status).toBe(400)
    expect(deep.error).toStartWith('input[2].arguments: tool call arguments hold more than')
    const shallow = await send({ type: 'function_call', call_id: 'c1', name: 'f', arguments: nested(60) })
    expect(shallow.status).toBe(200)
  })

  test("a custom tool's input holding a million commas in its string goes to Claude whole", async () => {
    const patch = 'a,'.repeat(1_000_000)
    const input = [{ role: 'user', content: 'q' }, { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: patch }, { type: 'custom_tool_call_output', call_id: 'c1', output: 'done' }, { role: 'user', content: 'go on' }]
    const res = await responses([{ type: 'custom', name: 'apply_patch' }], input)
    expect(res.status).toBe(200)
    const sent = up.requests.at(-1)!.json()
    expect(sent.messages[1].content[0]).toMatchObject({ type: 'tool_use', name: 'apply_patch', input: { input: patch } })
  })
})

test("the mock's tool directive: its JSON is the client's too, held to the same rules", async () => {
  const ask = async (args: string) => {
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], messages: [{ role: 'user', content: `mock: tool f ${args}` }] }),
    })
    return { ...((await res.json()) as { error?: string; choices?: { message: { tool_calls: { function: { arguments: string } }[] } }[] }), code: res.status }
  }
  const crowded = await ask(nested(2_000_000))
  expect(crowded.code).toBe(400)
  expect(crowded.error).toStartWith('mock: tool f: arguments hold more than 200000 JSON objects and arrays')
  const deep = await ask(nested(100))
  expect(deep.code).toBe(400)
  expect(deep.error).toContain('nested more than 64 levels deep')
  const fine = await ask('{"city":"Paris","days":[1,2]}')
  expect(fine.choices![0]!.message.tool_calls[0]!.function.arguments).toBe('{"city":"Paris","days":[1,2]}')
})

const seal = (json: string) => 'sy1.' + Buffer.from(json).toString('base64url')
/** A sealed search whose result content is nested `depth` arrays deep. */
const deepSearch = (depth: number) => seal(`{"w":{"id":"srvtoolu_x","input":{"query":"q"},"content":${'['.repeat(depth)}${']'.repeat(depth)}}}`)
/** A sealed search whose result content is `n` empty objects. */
const wideSearch = (n: number) => seal(`{"w":{"id":"srvtoolu_x","input":{"query":"q"},"content":[${Array(n).fill('{}').join(',')}]}}`)

/** A Responses request to a Claude model the mock serves, each envelope sent back in a reasoning item of its own. */
async function sealed(envelopes: string[]): Promise<Answer> {
  const input = [{ role: 'user', content: 'q' }, ...envelopes.map((e) => ({ type: 'reasoning', summary: [], encrypted_content: e })), { role: 'user', content: 'mock: text ok' }]
  const res = await fetch(`${gw.url}/api/alpha/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-claude', store: false, tools: [{ type: 'web_search' }], input }),
  })
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return { ...((await res.json()) as { error?: string; output_text?: string }), code: res.status }
}

describe('sealed reasoning sent back', () => {
  test('a million parts in one envelope is a 400 naming it, and holds the loop no longer than a scan', async () => {
    const r = await sealed([deepSearch(2_000_000)])
    expect(r.code).toBe(400)
    expect(r.error).toStartWith('input[1].encrypted_content: holds more than 200000 JSON objects and arrays')
    expect(await leastGap(() => sealed([deepSearch(2_000_000)]))).toBeLessThan(200)
  })

  test('the bound is for the envelopes of the request together', async () => {
    await boundTogether(sealed, wideSearch(60_000), 'input[3].encrypted_content:')
  })

  test("one nested past the body's depth is left out: the turn goes on without it", async () => {
    for (const depth of [65, 50_000]) {
      const r = await sealed([deepSearch(depth)])
      expect(r.code).toBe(200)
      expect(r.output_text).toBe('ok')
    }
  })

  test("one that is not JSON, or not the gateway's shape, is left out as before", async () => {
    for (const e of [seal('not json'), seal('[1,2]'), seal('{"w":[]}'), seal('{"__proto__":{"t":"a","s":"b"}}'), 'sy1.@@@']) {
      const r = await sealed([e])
      expect(r.code).toBe(200)
      expect(r.output_text).toBe('ok')
    }
  })
})
