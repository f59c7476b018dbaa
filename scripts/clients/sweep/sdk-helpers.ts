// The sweep of the SDKs' helpers beyond the plain calls: tool runners, threads, parse and
// stream helpers with structured output (sdk-sweep.ts).
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema'
import { ok, refused } from './checks.ts'
import { GPT, CLAUDE, MODELS, tools, schema, type Sweep } from './context.ts'

/** More SDK helpers: toolRunner, thread, runTools streamed, parse with strict tools, parsed streams. */
export async function sdkHelpers({ oa, an, check }: Sweep): Promise<void> {
  const weatherTool = () => betaTool({ name: 'get_weather', description: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const, run: (a) => `sunny in ${a.city}` })
  for (const model of MODELS) {
    await check(`beta.messages.toolRunner ${model} thread: false (plain and streamed)`, async () => {
      const ask = [{ role: 'user' as const, content: 'mock: tool get_weather {"city":"Lima"}' }]
      const final = await an.beta.messages.toolRunner({ model, max_tokens: 200, messages: ask, tools: [weatherTool()], max_iterations: 3, thread: false })
      const text = final.content[0]?.type === 'text' ? final.content[0].text : ''
      let streamed = ''
      for await (const s of an.beta.messages.toolRunner({ model, max_tokens: 200, messages: ask, tools: [weatherTool()], max_iterations: 3, thread: false, stream: true })) {
        const m = await s.finalMessage()
        if (m.content[0]?.type === 'text') streamed = m.content[0].text
      }
      ok(text === 'tool result: sunny in Lima' && streamed === text, `${text} / ${streamed}`)
      return text
    })
  }
  await check('beta.messages.toolRunner mock-claude with its default message thread', async () => {
    const final = await an.beta.messages.toolRunner({ model: CLAUDE, max_tokens: 200, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Lima"}' }], tools: [weatherTool()], max_iterations: 3 })
    ok(final.content[0]?.type === 'text', JSON.stringify(final.content))
    return final.content[0].text
  })
  await check('beta.messages.toolRunner mock-gpt with its default message thread → the 400 naming thread', () =>
    refused(async () => {
      for await (const _ of an.beta.messages.toolRunner({ model: GPT, max_tokens: 200, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Lima"}' }], tools: [weatherTool()], max_iterations: 3 })) void _
    }, /thread/))
  await check('beta.messages.thread mock-claude send twice', async () => {
    const t = an.beta.messages.thread({ model: CLAUDE, max_tokens: 100 })
    const a = await t.send([{ role: 'user', content: 'mock: text one' }])
    const b = await t.send([{ role: 'user', content: 'mock: text two' }])
    ok(a.content[0]?.type === 'text' && b.content[0]?.type === 'text' && b.content[0].text === 'two', JSON.stringify(b.content))
    return `${a.content[0].text}, ${b.content[0].text}`
  })
  for (const model of MODELS) {
    await check(`chat.completions.runTools ${model} stream: true`, async () => {
      const runner = oa.chat.completions.runTools({
        model, stream: true,
        messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Quito"}' }],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, function: (a: { city: string }) => `sunny in ${a.city}`, parse: (s: string) => JSON.parse(s) as { city: string } } }],
      })
      const text = await runner.finalContent()
      ok(text === 'tool result: sunny in Quito', `${text}`)
      return text
    })
    await check(`chat.completions.parse ${model} strict function tool → parsed_arguments`, async () => {
      const r = await oa.chat.completions.parse({ model, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Lyon"}' }], tools: [{ type: 'function', function: { ...tools[0]!.function, strict: true } }] })
      const call = r.choices[0]?.message.tool_calls?.[0]
      ok(call?.type === 'function' && (call.function.parsed_arguments as { city?: string })?.city === 'Lyon', JSON.stringify(r.choices[0]?.message))
      return JSON.stringify(call.function.parsed_arguments)
    })
    // The specification's reply to a tool call is `status: "requires_action"` (§4.5; the config's
    // `responses.tool_calls_status: completed` gives OpenAI's), and the SDK parses a call's
    // arguments only in a `completed` reply: parsed_arguments stays null here, by the spec.
    await check(`responses.parse ${model} strict function tool (requires_action: parsed_arguments null)`, async () => {
      const r = await oa.responses.parse({ model, input: 'mock: tool get_weather {"city":"Lyon"}', tools: [{ type: 'function', name: 'get_weather', parameters: tools[0]!.function.parameters, strict: true }] })
      const call = r.output.find((o) => o.type === 'function_call')
      ok(r.status === ('requires_action' as string) && call?.type === 'function_call' && JSON.parse(call.arguments).city === 'Lyon', JSON.stringify(r.output))
      return `${r.status}, parsed_arguments ${JSON.stringify(call.parsed_arguments)}`
    })
    await check(`responses.stream ${model} with text.format → output_parsed`, async () => {
      const final = await oa.responses.stream({ model, input: 'give', text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } } }).finalResponse()
      ok((final.output_parsed as { name?: string } | null)?.name === 'example', JSON.stringify(final.output_parsed))
      return JSON.stringify(final.output_parsed)
    })
    await check(`beta.messages.parse ${model} output_config.format`, async () => {
      const r = await an.beta.messages.parse({ model, max_tokens: 200, messages: [{ role: 'user', content: 'give' }], output_config: { format: { type: 'json_schema', schema } } })
      ok((r.parsed_output as { name?: string } | null)?.name === 'example', JSON.stringify(r.content))
      return JSON.stringify(r.parsed_output)
    })
  }
  await check('chat.completions.stream mock-gpt with response_format → parsed', async () => {
    const final = await oa.chat.completions.stream({ model: GPT, messages: [{ role: 'user', content: 'give' }], response_format: { type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } } }).finalChatCompletion()
    ok((final.choices[0]?.message.parsed as { name?: string } | null)?.name === 'example', JSON.stringify(final.choices[0]?.message))
    return JSON.stringify(final.choices[0]?.message.parsed)
  })
}
