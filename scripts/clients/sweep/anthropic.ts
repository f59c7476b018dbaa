// The sweep of the Anthropic client's messages (plain and beta), message batches, files and
// models, method by method (sdk-sweep.ts).
import Anthropic from '@anthropic-ai/sdk'
import { ok } from './checks.ts'
import { CLAUDE, MODELS, schema, type Sweep } from './context.ts'

/** messages and beta.messages: create, stream, countTokens, a tool_use round trip; messages.parse. */
export async function messages({ an, check }: Sweep): Promise<void> {
  for (const model of MODELS) {
    for (const [ns, m] of [['messages', an.messages], ['beta.messages', an.beta.messages]] as const) {
      await check(`${ns}.create ${model} withResponse`, async () => {
        const { data, request_id } = await (m as typeof an.messages).create({ model, max_tokens: 100, system: 'be brief', messages: [{ role: 'user', content: 'mock: text hi' }], metadata: { user_id: 'u1' } }).withResponse()
        ok(data.type === 'message' && data.content[0]?.type === 'text' && data.content[0].text === 'hi' && data.stop_reason === 'end_turn', JSON.stringify(data))
        ok(request_id, 'no request-id')
        return `${data.id} request_id=${request_id}`
      })
      await check(`${ns}.create ${model} stream`, async () => {
        const s = await (m as typeof an.messages).create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'mock: text x y' }], stream: true })
        let text = ''
        for await (const e of s) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text
        ok(text === 'x y', text)
        return text
      })
      await check(`${ns}.stream helper ${model}`, async () => {
        const s = (m as typeof an.messages).stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'mock: text streamed' }] })
        let deltas = ''
        s.on('text', (t) => (deltas += t))
        const final = await s.finalMessage()
        ok(deltas === 'streamed' && final.usage.output_tokens > 0, `${deltas} ${JSON.stringify(final.usage)}`)
        return final.id
      })
      await check(`${ns}.countTokens ${model}`, async () => {
        const r = await (m as typeof an.messages).countTokens({ model, system: 'x', messages: [{ role: 'user', content: 'count me please' }], tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] })
        ok(r.input_tokens > 0, JSON.stringify(r))
        return JSON.stringify(r)
      })
      await check(`${ns}.create ${model} tool_use round trip`, async () => {
        const toolsA = [{ name: 'get_weather', description: 'w', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }]
        const r = await (m as typeof an.messages).create({ model, max_tokens: 100, tools: toolsA, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Rome"}' }] })
        const use = r.content.find((b) => b.type === 'tool_use')
        ok(use && use.type === 'tool_use' && r.stop_reason === 'tool_use', JSON.stringify(r.content))
        const r2 = await (m as typeof an.messages).create({ model, max_tokens: 100, tools: toolsA, messages: [{ role: 'user', content: 'mock: tool get_weather {"city":"Rome"}' }, { role: 'assistant', content: r.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'hot' }] }] })
        ok(r2.content[0]?.type === 'text' && r2.content[0].text === 'tool result: hot', JSON.stringify(r2.content))
        return 'tool result: hot'
      })
    }
    await check(`messages.parse ${model} (output_config.format)`, async () => {
      const r = await an.messages.parse({ model, max_tokens: 200, messages: [{ role: 'user', content: 'give' }], output_config: { format: { type: 'json_schema', schema } } })
      ok((r.parsed_output as { name?: string } | null)?.name === 'example', JSON.stringify(r.content))
      return JSON.stringify(r.parsed_output)
    })
  }
}

/** messages.batches and beta.messages.batches: create, retrieve until ended, results, list, cancel, delete. */
export async function messageBatches({ an, check }: Sweep): Promise<void> {
  for (const [ns, b] of [['messages.batches', an.messages.batches], ['beta.messages.batches', an.beta.messages.batches]] as const) {
    const batches = b as typeof an.messages.batches
    let id = ''
    await check(`${ns}.create`, async () => {
      const r = await batches.create({ requests: MODELS.map((model, i) => ({ custom_id: `c${i}`, params: { model, max_tokens: 50, messages: [{ role: 'user' as const, content: `mock: text m${i}` }] } })) })
      ok(r.type === 'message_batch' && r.id, JSON.stringify(r))
      id = r.id
      return `${r.id} ${r.processing_status}`
    })
    await check(`${ns}.retrieve until ended`, async () => {
      let r = await batches.retrieve(id)
      for (let i = 0; i < 100 && r.processing_status !== 'ended'; i++) {
        await Bun.sleep(100)
        r = await batches.retrieve(id)
      }
      ok(r.processing_status === 'ended' && r.results_url, JSON.stringify(r))
      return `${JSON.stringify(r.request_counts)} ${r.results_url}`
    })
    await check(`${ns}.results`, async () => {
      const out: string[] = []
      for await (const item of await batches.results(id)) {
        ok(item.result.type === 'succeeded', JSON.stringify(item))
        const c = item.result.message.content[0]
        out.push(`${item.custom_id}=${c?.type === 'text' ? c.text : '?'}`)
      }
      ok(out.length === 2, out.join(','))
      return out.sort().join(',')
    })
    await check(`${ns}.list for await`, async () => {
      const ids: string[] = []
      for await (const x of batches.list({ limit: 1 })) ids.push(x.id)
      ok(ids.includes(id), ids.join(','))
      return `${ids.length} batches`
    })
    await check(`${ns}.cancel (an ended batch)`, async () => {
      try {
        const r = await batches.cancel(id)
        return r.processing_status
      } catch (e) {
        const err = e as { status?: number; error?: unknown }
        ok(err.status === 400 || err.status === 409, `status ${err.status}`)
        return `${err.status} ${JSON.stringify(err.error).slice(0, 80)}`
      }
    })
    await check(`${ns}.delete`, async () => {
      const r = await batches.delete(id)
      ok(r.type === 'message_batch_deleted' && r.id === id, JSON.stringify(r))
      return JSON.stringify(r)
    })
  }
}

/** files and beta.files (upload to delete, one as a document block); models and beta.models. */
export async function filesAndModels({ an, check }: Sweep): Promise<void> {
  for (const [ns, f] of [['files', an.files], ['beta.files', an.beta.files]] as const) {
    const files = f as typeof an.beta.files
    let id = ''
    await check(`${ns}.upload toFile`, async () => {
      const r = await files.upload({ file: await Anthropic.toFile(Buffer.from('anthropic file'), 'a.txt', { type: 'text/plain' }) })
      ok(r.type === 'file' && r.filename === 'a.txt' && r.size_bytes === 14, JSON.stringify(r))
      id = r.id
      return `${r.id} ${r.mime_type}`
    })
    await check(`${ns}.retrieveMetadata`, async () => {
      const r = await files.retrieveMetadata(id)
      ok(r.id === id && r.type === 'file', JSON.stringify(r))
      return r.filename
    })
    await check(`${ns}.list for await`, async () => {
      const ids: string[] = []
      for await (const x of files.list({ limit: 1 })) ids.push(x.id)
      ok(ids.includes(id), ids.join(','))
      return `${ids.length} files`
    })
    await check(`${ns}.download`, async () => {
      const t = await (await files.download(id)).text()
      ok(t === 'anthropic file', t)
      return t
    })
    await check(`${ns} file as a document block (mock-claude)`, async () => {
      const r = await an.beta.messages.create({ model: CLAUDE, max_tokens: 100, betas: ['files-api-2025-04-14'], messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: id } }, { type: 'text', text: 'read it' }] }] })
      ok(r.content[0]?.type === 'text', JSON.stringify(r.content))
      return r.content[0].text
    })
    await check(`${ns}.delete`, async () => {
      const r = await files.delete(id)
      ok(r.id === id && r.type === 'file_deleted', JSON.stringify(r))
      return JSON.stringify(r)
    })
  }
  for (const [ns, mo] of [['models', an.models], ['beta.models', an.beta.models]] as const) {
    const models = mo as typeof an.models
    await check(`${ns}.list for await / retrieve`, async () => {
      const ids: string[] = []
      for await (const x of models.list({ limit: 2 })) ids.push(x.id)
      ok(ids.length > 0, 'none')
      const r = await models.retrieve(ids[0]!)
      ok(r.type === 'model' && r.id === ids[0], JSON.stringify(r))
      return `${ids.length} models`
    })
  }
}
