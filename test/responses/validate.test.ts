// The responses surface's parameter rules over HTTP: every problem is a 400 naming the field, found before any
// upstream call; what Codex and the openai SDK send is accepted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
beforeAll(async () => {
  // the cases below go out back to back, more than the default burst of a key a second
  rig = await startResponsesRig({ SWITCHYARD_KEY_BURST_RPS: '10000', SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_IP_RPM: '100000' })
})
afterAll(async () => {
  await rig.stop()
})

async function rejects(body: Record<string, unknown>, pattern: RegExp) {
  const before = rig.up.requests.length
  const res = await rig.postResponses(body)
  const text = await res.text()
  expect({ status: res.status, text }).toMatchObject({ status: 400 })
  expect(JSON.parse(text).error).toMatch(pattern)
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(rig.up.requests.length).toBe(before)
}

describe('400 naming the field', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['unknown parameter', { model: 'gpt-4.1', input: 'hi', max_tokens: 5 }, /Unknown parameter: max_tokens/],
    ['two unknown parameters', { model: 'gpt-4.1', input: 'hi', top_k: 1, foo: 2 }, /Unknown parameters: top_k, foo/],
    ['missing model', { input: 'hi' }, /^model: required/],
    ['missing input', { model: 'gpt-4.1' }, /^input: required/],
    ['input and messages', { model: 'gpt-4.1', input: 'a', messages: [{ role: 'user', content: 'b' }] }, /input, messages: give one/],
    ['input a number', { model: 'gpt-4.1', input: 5 }, /^input: expected a string, an array or an object/],
    ['bad item type', { model: 'gpt-4.1', input: [{ type: 'telepathy' }] }, /^input\[0\]\.type: unsupported item type "telepathy"/],
    ['bad role', { model: 'gpt-4.1', input: [{ role: 'robot', content: 'x' }] }, /^input\[0\]\.role: expected user, assistant, system or developer/],
    ['bad part', { model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_video' }] }] }, /^input\[0\]\.content\[0\]\.type: unsupported content part type/],
    ['part without a type', { model: 'gpt-4.1', input: [{ role: 'user', content: [{ text: 'x' }] }] }, /^input\[0\]\.content\[0\]\.type: required$/],
    ['verbosity not a string', { model: 'gpt-4.1', input: 'hi', text: { verbosity: 5 } }, /^text\.verbosity: expected a string or null$/],
    ['cache comparison id not a string', { model: 'gpt-4.1', input: 'hi', prompt_cache_options: { comparison_response_id: 5 } }, /^prompt_cache_options\.comparison_response_id: expected a string or null$/],
    ['function_call without call_id', { model: 'gpt-4.1', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, /^input\[0\]\.call_id: expected a string/],
    ['temperature > 2', { model: 'gpt-4.1', input: 'hi', temperature: 2.5 }, /^temperature: expected a number from 0 to 2/],
    ['top_p > 1', { model: 'gpt-4.1', input: 'hi', top_p: 1.5 }, /^top_p: expected a number from 0 to 1/],
    ['stream not boolean', { model: 'gpt-4.1', input: 'hi', stream: 'yes' }, /^stream: expected a boolean/],
    ['max_output_tokens 0', { model: 'gpt-4.1', input: 'hi', max_output_tokens: 0 }, /^max_output_tokens: expected an integer of at least 1/],
    ['max_output_tokens above the model', { model: 'gpt-4o', input: 'hi', max_output_tokens: 100_000 }, /^max_output_tokens: 100000 is greater than the maximum output of gpt-4o/],
    ['prompt_cache_retention unknown, for a Claude model', { model: 'claude-sonnet-4-5', input: 'hi', prompt_cache_retention: '1h' }, /^prompt_cache_retention: "1h" cannot be translated/],
    ['reasoning_summary value', { model: 'gpt-5', input: 'hi', reasoning_summary: 'verbose' }, /^reasoning_summary: expected one of "auto", "concise", "detailed", "none"/],
    ['reasoning_summary on a model without summaries', { model: 'gpt-4.1', input: 'hi', reasoning_summary: 'auto' }, /^reasoning_summary: model gpt-4.1 does not produce reasoning summaries/],
    ['reasoning.summary on a Claude model', { model: 'claude-sonnet-4-5', input: 'hi', reasoning: { summary: 'detailed' } }, /^reasoning\.summary: "detailed" needs a GPT-5-family model/],
    ['reasoning_summary on a Claude model', { model: 'mock-claude', input: 'hi', reasoning_summary: 'auto' }, /^reasoning_summary: "auto" needs a GPT-5-family model/],
    ['reasoning effort on a non-reasoning model', { model: 'gpt-4o', input: 'hi', reasoning_effort: 'high' }, /^reasoning_effort: model gpt-4o does not support reasoning/],
    ['response_format shape', { model: 'gpt-4.1', input: 'hi', response_format: { type: 'json_schema' } }, /^response_format: expected/],
    ['text.format shape', { model: 'gpt-4.1', input: 'hi', text: { format: { type: 'xml' } } }, /^text\.format: expected/],
    ['tools not an array', { model: 'gpt-4.1', input: 'hi', tools: {} }, /^tools: expected an array of tools/],
    ['function tool without a name', { model: 'gpt-4.1', input: 'hi', tools: [{ type: 'function', parameters: {} }] }, /^tools\[0\]\.name: expected a name/],
    ['tool_choice naming an absent tool', { model: 'gpt-4.1', input: 'hi', tools: [{ type: 'function', name: 'a' }], tool_choice: { type: 'function', function: { name: 'b' } } }, /^tool_choice: names function tool "b", which is not among the tools/],
    ['tool_outputs without previous_response_id', { model: 'gpt-4.1', tool_outputs: [{ tool_call_id: 'c', output: 'x' }] }, /^tool_outputs: needs previous_response_id/],
    ['tool_outputs item without id', { model: 'gpt-4.1', previous_response_id: 'resp_x', tool_outputs: [{ output: 'x' }] }, /^tool_outputs\[0\]\.tool_call_id: required/],
    ['unknown previous_response_id', { model: 'gpt-4.1', input: 'hi', previous_response_id: 'resp_nope' }, /^previous_response_id: no stored response "resp_nope"/],
    ['a conversation name of 1,000 characters', { model: 'gpt-4.1', input: 'hi', conversation: 'c'.repeat(1000) }, /^conversation: expected a conversation id of 1 to 256 characters/],
    ['max_tool_calls 0', { model: 'gpt-4.1', input: 'hi', max_tool_calls: 0 }, /^max_tool_calls: expected an integer of at least 1/],
    ['metadata values', { model: 'gpt-4.1', input: 'hi', metadata: { a: 1 } }, /^metadata: expected an object of at most 16 string values|^metadata\.a:/],
    ['__proto__ key', { model: 'gpt-4.1', input: 'hi', ['__proto__']: { x: 1 } }, /__proto__/],
    ['gpt-5-codex is fine here but a Claude-family parameter is not', { model: 'gpt-5-codex', input: 'hi', thinking: { type: 'enabled' } }, /Unknown parameter: thinking/],
    // Claude-family models reject the OpenAI-only parameters (reject mode, the default)
    ['parallel_tool_calls for a Claude model', { model: 'claude-sonnet-4-5', input: 'hi', parallel_tool_calls: true }, /Claude-family model claude-sonnet-4-5: parallel_tool_calls/],
    // audio has no place in a translation: refused as chat's is, never dropped
    ['input_audio for a Claude model', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, /^input\[0\]\.content\[1\]: input_audio parts are not supported here/],
    ['input_audio in a tool output, for a Claude model', { model: 'claude-sonnet-4-5', input: [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, /^input\[1\]\.output\[0\]: input_audio parts are not supported here/],
    // a file named by a number is no file: a Claude model would have gone without it
    ['input_file whose file_id is a number, for a Claude model', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is in it?' }, { type: 'input_file', file_id: 5 }] }] }, /^input\[0\]\.content\[1\]\.file_id: expected a string, got a number/],
    ['input_file whose file_data is not a string', { model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_file', file_data: { pdf: 1 }, filename: 'a.pdf' }] }] }, /^input\[0\]\.content\[0\]\.file_data: expected a string, got an object/],
    ['input_file whose names are all null', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_file', file_id: null }] }] }, /^input\[0\]\.content\[1\]: input_file needs file_id, file_data or file_url/],
    // tools handed over in the input are offered to a Claude model as the turn's own are
    ['a handed-over function whose description is a number', { model: 'claude-sonnet-4-5', input: [{ type: 'additional_tools', tools: [{ type: 'function', name: 'f', description: 5, parameters: { type: 'object' } }] }, { role: 'user', content: 'go' }] }, /^input\[0\]\.tools\[0\]\.description: expected a string, got a number/],
    ['a handed-over namespace member whose strict is a string', { model: 'gpt-4.1', input: [{ type: 'additional_tools', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f', strict: 'yes' }] }] }, { role: 'user', content: 'go' }] }, /^input\[0\]\.tools\[0\]\.tools\[0\]\.strict: expected a boolean/],
    // an earlier answer's annotations go back to an OpenAI model as they came, and are kept in a conversation
    ['an answer whose annotations are a string', { model: 'gpt-4.1', input: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'output_text', text: 'x', annotations: 'y' }] }, { role: 'user', content: 'go' }] }, /^input\[1\]\.content\[0\]\.annotations: expected an array of objects, got a string/],
    ['an answer whose logprobs hold a number', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x', annotations: [], logprobs: [5] }] }, { role: 'user', content: 'go' }] }, /^input\[1\]\.content\[0\]\.logprobs\[0\]: expected an object, got a number/],
    // what a translation reads of a tool: of another type it would be left out, the model told less
    ['a function tool whose description is a number, for a Claude model', { model: 'claude-sonnet-4-5', input: 'hi', tools: [{ type: 'function', name: 'f', description: 5, parameters: { type: 'object' } }] }, /^tools\[0\]\.description: expected a string, got a number/],
    ['a function tool whose strict is a string', { model: 'gpt-4.1', input: 'hi', tools: [{ type: 'function', name: 'f', strict: 'yes', parameters: { type: 'object' } }] }, /^tools\[0\]\.strict: expected a boolean/],
    ['a custom tool whose format is a string', { model: 'claude-sonnet-4-5', input: 'hi', tools: [{ type: 'custom', name: 'f', format: 'lark' }] }, /^tools\[0\]\.format: expected \{ type: "text" \} or/],
    ['a custom tool whose grammar has no definition', { model: 'claude-sonnet-4-5', input: 'hi', tools: [{ type: 'custom', name: 'f', format: { type: 'grammar', syntax: 'lark' } }] }, /^tools\[0\]\.format\.definition: expected the grammar as a string, got none/],
    ['a custom tool whose nested grammar has a number for its syntax', { model: 'gpt-4.1', input: 'hi', tools: [{ type: 'custom', name: 'f', format: { type: 'grammar', grammar: { syntax: 1, definition: 'start: /x/' } } }] }, /^tools\[0\]\.format\.grammar\.syntax: expected "lark" or "regex"/],
    ['a namespace member whose description is an object, for a Claude model', { model: 'claude-sonnet-4-5', input: 'hi', tools: [{ type: 'namespace', name: 'ns', description: 'tools', tools: [{ type: 'function', name: 'f', description: { text: 'x' }, parameters: { type: 'object' } }] }] }, /^tools\[0\]\.tools\[0\]\.description: expected a string, got an object/],
    // OpenAI pairs each output with a call; a Claude model was sent the orphan in Anthropic's terms, and the mock answered it
    ['a function_call_output naming no call, for a Claude model', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'hi' }, { type: 'function_call_output', call_id: 'zz', output: 'x' }] }, /^input\[1\]\.call_id: "zz" answers no call of this input or of the response it continues/],
    ['a custom_tool_call_output naming no call', { model: 'gpt-4.1', input: [{ type: 'custom_tool_call', call_id: 'c1', name: 'p', input: 'x' }, { type: 'custom_tool_call_output', call_id: 'c2', output: 'ok' }] }, /^input\[1\]\.call_id: "c2" answers no call/],
    ['a call left without its output as the conversation goes on', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'hi' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { role: 'user', content: 'never mind' }] }, /^input\[1\]\.call_id: call "c1" has no output \(a function_call_output or custom_tool_call_output naming it\) before input\[2\], where the conversation goes on/],
    ['a tool message of the chat-style messages answering no call', { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'c9', content: 'x' }] }, /^messages\[1\]\.tool_call_id: "c9" answers no call/],
    // a Claude model is sent a tool loop as turns, each call's output in the turn right after it
    ['a call whose output comes after another turn began, for a Claude model', { model: 'claude-sonnet-4-5', input: [{ role: 'user', content: 'hi' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call', call_id: 'c2', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'a' }, { role: 'assistant', content: 'y' }, { type: 'function_call_output', call_id: 'c2', output: 'b' }] }, /^input\[2\]\.call_id: call "c2" has no output in the turn right after it; claude-sonnet-4-5 takes each output there/],
    ['an output before its call, for the mock', { model: 'mock-gpt', input: [{ role: 'user', content: 'hi' }, { type: 'function_call_output', call_id: 'c1', output: 'a' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }] }, /^input\[1\]\.call_id: the output of call "c1" is not in the turn right after the one that made the call; mock-gpt takes each output there/],
    ['seed and response_format for a Claude model', { model: 'claude-sonnet-4-5', input: 'hi', seed: 1, response_format: { type: 'json_object' } }, /Claude-family model claude-sonnet-4-5: response_format, seed|seed, response_format/],
  ]
  for (const [name, body, pattern] of cases) test(name, () => rejects(body, pattern))

  test('a raw __proto__ key in the JSON text', async () => {
    const res = await rig.postResponses('{"model":"gpt-4.1","input":"hi","__proto__":{"a":1}}')
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatch(/__proto__/)
  })

  test('gpt-5-codex is served only on the responses surface', async () => {
    const chat = await rig.post({ model: 'gpt-5-codex', messages: [{ role: 'user', content: 'hi' }] })
    expect(chat.status).toBe(400)
    expect((await chat.json()).error).toMatch(/not served on the chat surface; use responses \(POST \/api\/alpha\/v1\/responses\)/)
    const msgs = await fetch(`${rig.gw.url}/api/beta/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': rig.gw.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpt-5-codex', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(msgs.status).toBe(400)
    expect((await msgs.json()).error).toMatch(/not served on the messages surface/)
  })
})

describe('accepted', () => {
  test("what Codex sends (store:false, client item ids, custom/tool_search/web_search/namespace tools, text.verbosity, client_metadata, prompt_cache_key, include)", async () => {
    rig.up.script({ json: { id: 'resp_up_1', object: 'response', created_at: 1, status: 'completed', model: 'gpt-5-codex', output: [], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } } })
    const codex = {
      model: 'gpt-5-codex',
      input: [
        { type: 'message', id: 'msg_client_1', role: 'developer', content: [{ type: 'input_text', text: 'base instructions' }] },
        { type: 'message', id: 'msg_client_2', role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
      ],
      tools: [
        { type: 'function', name: 'exec_command', description: 'run', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
        { type: 'custom', name: 'apply_patch', description: 'patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
        { type: 'tool_search', execution: 'client' },
        { type: 'web_search', external_web_access: false },
        { type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: {} } }] },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      stream: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'sess-1',
      text: { verbosity: 'low' },
      client_metadata: { session_id: 's', thread_id: 't', turn_id: 'u' },
    }
    const res = await rig.postResponses(codex)
    expect(res.status).toBe(200)
    // the pass-through body is the client's, spelled officially (here: already official)
    const up = rig.up.requests.at(-1)!
    expect(up.path).toBe('/responses')
    expect(up.json()).toEqual({ ...codex, model: 'gpt-5-codex' })
  })

  test('aliases are spelled officially upstream: messages → input, system → instructions, reasoning_effort/summary → reasoning, response_format → text.format, chat-style tools flattened', async () => {
    rig.up.script({ json: { id: 'resp_up_2', object: 'response', created_at: 1, status: 'completed', model: 'gpt-5', output: [], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } } })
    const res = await rig.postResponses({
      model: 'gpt-5',
      system: 'be brief',
      messages: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'image_url', image_url: { url: 'https://x/a.png', detail: 'low' } }] }],
      reasoning_effort: 'low',
      reasoning_summary: 'concise',
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      seed: 7,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat')).toBe('seed')
    expect(rig.up.requests.at(-1)!.json()).toEqual({
      model: 'gpt-5',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_image', image_url: 'https://x/a.png', detail: 'low' }] }],
      instructions: 'be brief',
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }],
      tool_choice: { type: 'function', name: 'f' },
      reasoning: { effort: 'low', summary: 'concise' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      // a reasoning model's reply the gateway keeps: its reasoning asked for whole, to go back next turn
      include: ['reasoning.encrypted_content'],
    })
  })

  test('input forms: a string, an object with content, an array of content parts', async () => {
    for (const input of ['hello', { content: 'hello' }, [{ type: 'input_text', text: 'hello' }]]) {
      const res = await rig.postResponses({ model: 'mock-gpt', input })
      expect(res.status).toBe(200)
      expect((await res.json()).output_text).toBe('hello')
    }
  })
})
