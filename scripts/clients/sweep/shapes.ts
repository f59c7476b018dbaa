// The sweep's reply shapes: every reply, stream event, item and block carries each field the
// SDKs' types declare without `?` (checks.ts reads them from their .d.ts) (sdk-sweep.ts).
import Anthropic from '@anthropic-ai/sdk'
import { toFile } from 'openai'
import { ok, shaped, shapedBut, lacking, A, O } from './checks.ts'
import { GPT, CLAUDE, MODELS, schema, type Sweep } from './context.ts'

/** Reply shapes against the SDKs' types. */
export async function shapes({ oa, an, check }: Sweep): Promise<void> {
  for (const model of MODELS) {
    await check(`shape: chat ChatCompletion / message / usage ${model}`, async () => {
      const r = await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'shape' }] })
      shaped(r, O, 'chat/completions/completions.d.ts', 'ChatCompletion')
      shaped(r.choices[0]!.message, O, 'chat/completions/completions.d.ts', 'ChatCompletionMessage')
      return shaped(r.usage, O, 'completions.d.ts', 'CompletionUsage')
    })
    await check(`shape: chat ChatCompletionChunk ${model}`, async () => {
      for await (const c of await oa.chat.completions.create({ model, messages: [{ role: 'user', content: 'shape' }], stream: true })) shaped(c, O, 'chat/completions/completions.d.ts', 'ChatCompletionChunk')
      return 'every chunk'
    })
    await check(`shape: Response / usage / output message ${model}`, async () => {
      const r = await oa.responses.create({ model, input: 'shape' })
      shaped(r, O, 'responses/responses.d.ts', 'Response')
      shaped(r.usage, O, 'responses/responses.d.ts', 'ResponseUsage')
      return shaped(r.output.find((o) => o.type === 'message'), O, 'responses/responses.d.ts', 'ResponseOutputMessage')
    })
    await check(`shape: streamed Response (response.completed) ${model}`, async () => {
      let final: unknown
      for await (const e of await oa.responses.create({ model, input: 'shape', stream: true })) if (e.type === 'response.completed') final = e.response
      return shaped(final, O, 'responses/responses.d.ts', 'Response')
    })
    await check(`shape: Message / Usage ${model}`, async () => {
      const r = await an.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] })
      shaped(r, A, 'messages/messages.d.ts', 'Message')
      return shaped(r.usage, A, 'messages/messages.d.ts', 'Usage')
    })
    await check(`shape: streamed Message (finalMessage) ${model}`, async () => {
      const r = await an.messages.stream({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] }).finalMessage()
      shaped(r, A, 'messages/messages.d.ts', 'Message')
      return shaped(r.usage, A, 'messages/messages.d.ts', 'Usage')
    })
  }
  await check('shape: MessageBatch, FileMetadata, FileObject, Batch, Conversation, Model, InputTokenCountResponse', async () => {
    const mb = await an.messages.batches.create({ requests: [{ custom_id: 's', params: { model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 's' }] } }] })
    shaped(mb, A, 'messages/batches.d.ts', 'MessageBatch')
    shaped(mb.request_counts, A, 'messages/batches.d.ts', 'MessageBatchRequestCounts')
    const af = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('s'), 's.txt') })
    shaped(af, A, 'files.d.ts', 'FileMetadata')
    shaped(await an.beta.files.retrieveMetadata(af.id), A, 'beta/files.d.ts', 'BetaFileMetadata')
    const of = await oa.files.create({ file: await toFile(Buffer.from('s'), 's.txt'), purpose: 'user_data' })
    shaped(of, O, 'files.d.ts', 'FileObject')
    const line = JSON.stringify({ custom_id: 's', method: 'POST', url: '/v1/chat/completions', body: { model: GPT, messages: [{ role: 'user', content: 's' }] } })
    const bf = await oa.files.create({ file: await toFile(Buffer.from(line + '\n'), 's.jsonl'), purpose: 'batch' })
    shaped(await oa.batches.create({ input_file_id: bf.id, endpoint: '/v1/chat/completions', completion_window: '24h' }), O, 'batches.d.ts', 'Batch')
    shaped(await oa.conversations.create({}), O, 'conversations/conversations.d.ts', 'Conversation')
    shaped(await oa.models.retrieve(GPT), O, 'models.d.ts', 'Model')
    return shaped(await oa.responses.inputTokens.count({ model: GPT, input: 's' }), O, 'responses/input-tokens.d.ts', 'InputTokenCountResponse')
  })


  await check('shape: BetaMessage / BetaUsage (beta.messages), ModelInfo, BetaModelInfo, DeletedFile, MessageBatchIndividualResponse', async () => {
    for (const model of MODELS) {
      const b = await an.beta.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] })
      shaped(b, A, 'beta/messages/messages.d.ts', 'BetaMessage')
      shapedBut(b.usage, 'BetaUsage')
      const bs = await an.beta.messages.stream({ model, max_tokens: 50, messages: [{ role: 'user', content: 'shape' }] }).finalMessage()
      shaped(bs, A, 'beta/messages/messages.d.ts', 'BetaMessage')
      shapedBut(bs.usage, 'BetaUsage')
    }
    shaped(await an.models.retrieve(CLAUDE), A, 'models.d.ts', 'ModelInfo')
    shaped(await an.beta.models.retrieve(CLAUDE), A, 'beta/models.d.ts', 'BetaModelInfo')
    const f = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('d'), 'd.txt') })
    shaped(await an.files.delete(f.id), A, 'files.d.ts', 'DeletedFile')
    const mb = await an.messages.batches.create({ requests: [{ custom_id: 's', params: { model: GPT, max_tokens: 10, messages: [{ role: 'user', content: 's' }] } }] })
    for (let i = 0; i < 100 && (await an.messages.batches.retrieve(mb.id)).processing_status !== 'ended'; i++) await Bun.sleep(100)
    for await (const item of await an.messages.batches.results(mb.id)) {
      shaped(item, A, 'messages/batches.d.ts', 'MessageBatchIndividualResponse')
      if (item.result.type === 'succeeded') shaped(item.result.message, A, 'messages/messages.d.ts', 'Message')
    }
    return 'all whole'
  })
  await check('shape: OpenAI FileDeleted, ConversationDeletedResource, ResponseItemList, ConversationItemList, batch output line', async () => {
    const f = await oa.files.create({ file: await toFile(Buffer.from('d'), 'd.txt'), purpose: 'user_data' })
    shaped(await oa.files.delete(f.id), O, 'files.d.ts', 'FileDeleted')
    const c = await oa.conversations.create({ items: [{ type: 'message', role: 'user', content: 'x' }] })
    const page = await oa.conversations.items.list(c.id)
    shaped(page.data[0]!, O, 'conversations/conversations.d.ts', 'Message')
    shaped(await oa.conversations.delete(c.id), O, 'conversations/conversations.d.ts', 'ConversationDeletedResource')
    const r = await oa.responses.create({ model: GPT, input: 'shape' })
    const items = await oa.responses.inputItems.list(r.id)
    shaped(items.data[0]!, O, 'responses/responses.d.ts', 'ResponseInputMessageItem')
    shaped(await oa.responses.inputItems.list(r.id).asResponse().then((x) => x.json()), O, 'responses/input-items.d.ts', 'ResponseItemList')
    const c2 = await oa.conversations.create({})
    shaped(await oa.conversations.items.create(c2.id, { items: [{ type: 'message', role: 'user', content: 'y' }] }), O, 'conversations/items.d.ts', 'ConversationItemList')
    shaped(await oa.conversations.items.list(c2.id).asResponse().then((x) => x.json()), O, 'conversations/items.d.ts', 'ConversationItemList')
    return 'all whole'
  })


  for (const model of MODELS) {
    await check(`shape: every responses stream event and item ${model} (text, tool call, json)`, async () => {
      const bad = new Set<string>()
      const fn = { type: 'function' as const, name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } }, strict: false }
      for (const body of [{ input: 'mock: text a b' }, { input: 'mock: tool f {"a":"x"}', tools: [fn] }, { input: 'j', text: { format: { type: 'json_schema' as const, name: 'j', schema } } }]) {
        for await (const e of await oa.responses.create({ model, stream: true, ...body })) for (const l of lacking(e, O, 'responses/responses.d.ts')) bad.add(l.replace(/\[\d+\]/g, '[]'))
        for (const l of lacking(await oa.responses.create({ model, ...body }), O, 'responses/responses.d.ts')) bad.add('plain ' + l.replace(/\[\d+\]/g, '[]'))
      }
      ok(bad.size === 0, [...bad].join('; '))
      return 'all whole'
    })
    await check(`shape: every messages stream event and block ${model} (text, tool_use)`, async () => {
      const bad = new Set<string>()
      const toolsA = [{ name: 'f', input_schema: { type: 'object' as const, properties: { a: { type: 'string' } } } }]
      for (const body of [{ messages: [{ role: 'user' as const, content: 'mock: text a b' }] }, { tools: toolsA, messages: [{ role: 'user' as const, content: 'mock: tool f {"a":"x"}' }] }]) {
        for await (const e of await an.messages.create({ model, max_tokens: 100, stream: true, ...body })) for (const l of lacking(e, A, 'messages/messages.d.ts')) bad.add(l.replace(/\[\d+\]/g, '[]'))
        for (const l of lacking(await an.messages.create({ model, max_tokens: 100, ...body }), A, 'messages/messages.d.ts')) bad.add('plain ' + l.replace(/\[\d+\]/g, '[]'))
      }
      ok(bad.size === 0, [...bad].join('; '))
      return 'all whole'
    })
    await check(`shape: conversation items ${model}`, async () => {
      const c = await oa.conversations.create({})
      await oa.responses.create({ model, conversation: c.id, input: 'mock: text hi' })
      const bad = lacking((await oa.conversations.items.list(c.id)).data, O, 'conversations/conversations.d.ts')
      ok(bad.length === 0, bad.join('; '))
      return 'all whole'
    })
  }
}
