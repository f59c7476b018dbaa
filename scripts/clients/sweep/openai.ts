// The sweep of the openai client's chat completions and responses, method by method, on both
// mock models (sdk-sweep.ts).
import { ok, refused } from './checks.ts'
import { GPT, CLAUDE, MODELS, tools, schema, type Sweep } from './context.ts'

/** chat.completions: create, stream, tools, runTools, parse; the stored-completion methods refused. */
export async function chatCompletions({ oa, check }: Sweep): Promise<void> {
  for (const model of MODELS) {
    await check(`chat.completions.create ${model} withResponse`, async () => {
      // a Claude model takes `max_tokens` on chat: `max_completion_tokens` is the §8 400 for it
      const limit = model === GPT ? { max_completion_tokens: 50 } : { max_tokens: 50 }
      const { data, response, request_id } = await oa.chat.completions.create({ model, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'mock: text hi' }], ...limit, temperature: 0.5, metadata: { a: 'b' } }).withResponse()
      ok(data.choices[0]?.message.content === 'hi', `content ${data.choices[0]?.message.content}`)
      ok(data.object === 'chat.completion' && data.usage?.total_tokens, 'shape')
      ok(request_id && response.headers.get('x-request-id') === request_id, `x-request-id ${request_id}`)
      return `${data.id} request_id=${request_id}`
    })
    await check(`chat.completions.create ${model} stream include_usage`, async () => {
      const stream = await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'mock: text one two three' }], stream: true, stream_options: { include_usage: true } })
      let text = ''
      let usage = 0
      for await (const c of stream) {
        text += c.choices[0]?.delta.content ?? ''
        if (c.usage) usage = c.usage.total_tokens
      }
      ok(text === 'one two three' && usage > 0, `${text} ${usage}`)
      return `${text} usage=${usage}`
    })
    await check(`chat.completions.stream helper ${model}`, async () => {
      const s = oa.chat.completions.stream({ model, messages: [{ role: 'user', content: 'mock: text streamed' }] })
      let deltas = ''
      s.on('content', (d) => (deltas += d))
      const final = await s.finalChatCompletion()
      ok(final.choices[0]?.message.content === 'streamed' && deltas === 'streamed', JSON.stringify(final.choices[0]))
      return final.id
    })
    await check(`chat.completions.create ${model} tool call`, async () => {
      const r = await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Paris"}' }], tools, tool_choice: 'auto' })
      const call = r.choices[0]?.message.tool_calls?.[0]
      ok(call?.type === 'function' && call.function.name === 'get_weather' && r.choices[0]?.finish_reason === 'tool_calls', JSON.stringify(r.choices[0]))
      return call.id
    })
    await check(`chat.completions.runTools ${model}`, async () => {
      const runner = oa.chat.completions.runTools({
        model,
        messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Paris"}' }],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, function: (a: { city: string }) => `sunny in ${a.city}`, parse: (s: string) => JSON.parse(s) as { city: string } } }],
      })
      const text = await runner.finalContent()
      ok(text === 'tool result: sunny in Paris', `${text}`)
      return text
    })
  }
  await check('chat.completions.parse mock-gpt (json_schema)', async () => {
    const r = await oa.chat.completions.parse({ model: GPT, messages: [{ role: 'user', content: 'give' }], response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } } })
    const parsed = r.choices[0]?.message.parsed as { name?: string } | null
    ok(parsed?.name === 'example', JSON.stringify(r.choices[0]?.message))
    return JSON.stringify(parsed)
  })
  await check('chat.completions.parse mock-claude is the §8 400 naming response_format', () =>
    refused(() => oa.chat.completions.parse({ model: CLAUDE, messages: [{ role: 'user', content: 'give' }], response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } } }), /response_format/))
  await check('chat.completions.create .asResponse()', async () => {
    const res = await oa.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'raw' }] }).asResponse()
    ok(res.status === 200 && (await res.json()).object === 'chat.completion', `${res.status}`)
    return `${res.status} ${res.headers.get('content-type')}`
  })
  // Stored chat completions are not served (the spec's chat surface is POST only).
  await check('chat.completions.retrieve → clear JSON error', () => refused(() => oa.chat.completions.retrieve('chatcmpl-x'), /./))
  await check('chat.completions.update → clear JSON error', () => refused(() => oa.chat.completions.update('chatcmpl-x', { metadata: { a: 'b' } }), /./))
  await check('chat.completions.list → clear JSON error', () => refused(() => oa.chat.completions.list(), /./))
  await check('chat.completions.delete → clear JSON error', () => refused(() => oa.chat.completions.delete('chatcmpl-x'), /./))
  await check('chat.completions.messages.list → clear JSON error', () => refused(() => oa.chat.completions.messages.list('chatcmpl-x'), /./))
}

/** responses: create, retrieve, input items and tokens, streams, tool calls, cancel, compact, delete, parse. */
export async function responses({ oa, check }: Sweep): Promise<void> {
  for (const model of MODELS) {
    let id = ''
    await check(`responses.create ${model} withResponse`, async () => {
      const { data, request_id } = await oa.responses.create({ model, input: 'mock: text hello', instructions: 'be brief', max_output_tokens: 50, metadata: { k: 'v' }, store: true }).withResponse()
      ok(data.output_text === 'hello' && data.object === 'response' && data.status === 'completed', `${data.output_text} ${data.status}`)
      ok(request_id, 'no x-request-id')
      id = data.id
      return `${id} request_id=${request_id}`
    })
    await check(`responses.retrieve ${model}`, async () => {
      const r = await oa.responses.retrieve(id)
      ok(r.id === id && r.output_text === 'hello', `${r.id} ${r.output_text}`)
      return r.status ?? ''
    })
    await check(`responses.retrieve ${model} include, include_obfuscation, starting_after`, async () => {
      const r = await oa.responses.retrieve(id, { include: ['message.output_text.logprobs'], include_obfuscation: false, starting_after: 0 })
      ok(r.id === id, r.id)
      return r.status ?? ''
    })
    // every response is answered in the foreground, so there is no event stream to replay
    await check(`responses.retrieve ${model} stream: true → clear JSON error naming stream`, () => refused(() => oa.responses.retrieve(id, { stream: true }), /stream/))
    await check(`responses.inputItems.list ${model} for await`, async () => {
      const items = []
      for await (const it of oa.responses.inputItems.list(id, { limit: 1, order: 'asc' })) items.push(it)
      ok(items.length === 1 && items[0]?.type === 'message', JSON.stringify(items).slice(0, 200))
      return `${items.length} item(s)`
    })
    await check(`responses.inputTokens.count ${model}`, async () => {
      const r = await oa.responses.inputTokens.count({ model, input: 'count these tokens', instructions: 'x' })
      ok(r.object === 'response.input_tokens' && r.input_tokens > 0, JSON.stringify(r))
      return JSON.stringify(r)
    })
    await check(`responses.create ${model} stream`, async () => {
      const s = await oa.responses.create({ model, input: 'mock: text a b', stream: true })
      let text = ''
      let completed = false
      for await (const e of s) {
        if (e.type === 'response.output_text.delta') text += e.delta
        if (e.type === 'response.completed') completed = true
      }
      ok(text === 'a b' && completed, `${text} ${completed}`)
      return text
    })
    await check(`responses.stream helper ${model}`, async () => {
      const s = oa.responses.stream({ model, input: 'mock: text via helper' })
      const final = await s.finalResponse()
      ok(final.output_text === 'via helper', final.output_text)
      return final.id
    })
    await check(`responses.create ${model} function call + previous_response_id`, async () => {
      const r = await oa.responses.create({ model, input: 'mock: tool get_weather {"city":"Oslo"}', tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters, strict: true }] })
      const call = r.output.find((o) => o.type === 'function_call')
      ok(call && call.type === 'function_call', JSON.stringify(r.output))
      const r2 = await oa.responses.create({ model, previous_response_id: r.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'rainy' }], tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters, strict: true }] })
      ok(r2.output_text === 'tool result: rainy', r2.output_text)
      return r2.output_text
    })
    await check(`responses.cancel ${model} (background)`, async () => {
      const r = await oa.responses.create({ model, input: 'mock: text bg', background: true })
      try {
        const c = await oa.responses.cancel(r.id)
        return `${r.status} → ${c.status}`
      } catch (e) {
        // OpenAI: cancelling a background response that already finished is a 400
        const err = e as { status?: number; error?: unknown }
        ok(err.status === 400 || err.status === 409, `status ${err.status}`)
        return `${r.status}, cancel: ${err.status} ${JSON.stringify(err.error).slice(0, 80)}`
      }
    })
    await check(`responses.cancel ${model} (not background) → clear error`, () => refused(() => oa.responses.cancel(id), /./))
    // standalone compaction is not offered (context_management on a request is)
    await check(`responses.compact ${model} → clear JSON error naming compact`, () =>
      refused(() => oa.responses.compact({ model, input: [{ role: 'user', content: 'compact me' }, { role: 'assistant', content: 'ok' }] }), /compact/))
    await check(`responses.delete ${model}`, async () => {
      const r = await oa.responses.delete(id)
      ok(r === undefined || r === null || typeof r === 'object', 'shape')
      await refused(() => oa.responses.retrieve(id), /./)
      return 'deleted, then 404'
    })
  }
  await check('responses.parse mock-gpt (text.format json_schema)', async () => {
    const r = await oa.responses.parse({ model: GPT, input: 'give', text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } } })
    ok((r.output_parsed as { name?: string } | null)?.name === 'example', JSON.stringify(r.output_parsed))
    return JSON.stringify(r.output_parsed)
  })
  await check('responses.parse mock-claude (text.format json_schema)', async () => {
    const r = await oa.responses.parse({ model: CLAUDE, input: 'give', text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } } })
    ok((r.output_parsed as { name?: string } | null)?.name === 'example', JSON.stringify(r.output_parsed))
    return JSON.stringify(r.output_parsed)
  })
}
