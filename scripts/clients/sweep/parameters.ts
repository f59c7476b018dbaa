// The sweep's calls with the parameters the official APIs define beyond the common ones: cursors,
// filters and each API's own options, and the unified roots (sdk-sweep.ts).
import Anthropic from '@anthropic-ai/sdk'
import OpenAI, { toFile } from 'openai'
import { ok, refused } from './checks.ts'
import { GPT, CLAUDE, type Sweep } from './context.ts'

/** Parameters the official APIs define, on both clients. */
export async function parameters({ oa, an, check, key, url }: Sweep): Promise<void> {
  await check('responses.inputTokens.count with every parameter (mock-gpt)', async () => {
    const prev = await oa.responses.create({ model: GPT, input: 'earlier turn' })
    const conv = await oa.conversations.create({})
    const fn = { type: 'function' as const, name: 'f', parameters: { type: 'object', properties: {} }, strict: false }
    const a = await oa.responses.inputTokens.count({ model: GPT, input: 'count', instructions: 'x', previous_response_id: prev.id, tools: [fn], tool_choice: 'auto', parallel_tool_calls: true, reasoning: { effort: 'low' }, text: { format: { type: 'text' }, verbosity: 'low' }, truncation: 'auto', personality: 'friendly' })
    const b = await oa.responses.inputTokens.count({ model: GPT, input: 'count', conversation: conv.id })
    ok(a.input_tokens > 0 && b.input_tokens > 0, `${JSON.stringify(a)} ${JSON.stringify(b)}`)
    return `${a.input_tokens} / ${b.input_tokens}`
  })
  await check('responses.inputItems.list include, order desc, after cursor', async () => {
    const r = await oa.responses.create({ model: GPT, input: [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: 'three' }] })
    const page = await oa.responses.inputItems.list(r.id, { limit: 1, order: 'desc', include: ['message.input_image.image_url'] })
    ok(page.data.length === 1 && page.has_more, JSON.stringify(page.data))
    const next = await oa.responses.inputItems.list(r.id, { limit: 5, order: 'desc', after: page.data[0]!.id })
    ok(next.data.length === 2, `${next.data.length} after the first`)
    return `${page.data[0]!.id} then ${next.data.length}`
  })
  await check('conversations.items.list after cursor, include', async () => {
    const c = await oa.conversations.create({ items: [{ type: 'message', role: 'user', content: 'a' }, { type: 'message', role: 'user', content: 'b' }] })
    const first = await oa.conversations.items.list(c.id, { limit: 1, include: ['message.output_text.logprobs'] })
    const rest = await oa.conversations.items.list(c.id, { after: first.data[0]!.id! })
    ok(first.data.length === 1 && rest.data.length === 1, `${first.data.length} ${rest.data.length}`)
    return 'ok'
  })
  await check('files.list after cursor, order asc', async () => {
    const page = await oa.files.list({ limit: 1, order: 'asc' })
    const next = await oa.files.list({ limit: 1, order: 'asc', after: page.data[0]!.id })
    ok(page.data.length === 1 && next.data.length === 1 && next.data[0]!.id !== page.data[0]!.id, 'pages')
    return `${page.data[0]!.id} → ${next.data[0]!.id}`
  })
  await check('batches.create endpoint /v1/responses, output_expires_after; list after', async () => {
    const line = JSON.stringify({ custom_id: 'r', method: 'POST', url: '/v1/responses', body: { model: GPT, input: 'mock: text rb' } })
    const input = await oa.files.create({ file: await toFile(Buffer.from(line + '\n'), 'r.jsonl'), purpose: 'batch' })
    const b = await oa.batches.create({ input_file_id: input.id, endpoint: '/v1/responses', completion_window: '24h', output_expires_after: { anchor: 'created_at', seconds: 3600 } })
    const page = await oa.batches.list({ limit: 1 })
    const next = await oa.batches.list({ limit: 1, after: page.data[0]!.id })
    ok(b.endpoint === '/v1/responses' && page.data.length === 1 && next.data.length === 1, `${b.endpoint} ${next.data.length}`)
    return b.id
  })
  await check('batches.create endpoint /v1/embeddings → clear JSON error naming endpoint', async () => {
    const input = await oa.files.create({ file: await toFile(Buffer.from('{"custom_id":"e","method":"POST","url":"/v1/embeddings","body":{"model":"x","input":"y"}}\n'), 'e.jsonl'), purpose: 'batch' })
    return refused(() => oa.batches.create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' }), /endpoint|embeddings/)
  })
  await check('unified root /api/v1: files and batches with the openai client', async () => {
    const u = new OpenAI({ apiKey: key, baseURL: `${url}/api/v1`, maxRetries: 0 })
    const f = await u.files.create({ file: await toFile(Buffer.from('u'), 'u.txt'), purpose: 'user_data' })
    const got = await u.files.retrieve(f.id)
    const list = await u.batches.list()
    ok(got.id === f.id && Array.isArray(list.data), 'shapes')
    await u.files.delete(f.id)
    return f.id
  })
  await check('messages.create mock-claude with Claude parameters', async () => {
    const r = await an.messages.create({ model: CLAUDE, max_tokens: 2048, messages: [{ role: 'user', content: 'mock: text p' }], stop_sequences: ['zzz'], service_tier: 'auto', thinking: { type: 'enabled', budget_tokens: 1024 }, tool_choice: { type: 'auto' }, tools: [{ name: 't', input_schema: { type: 'object' } }], cache_control: { type: 'ephemeral' }, inference_geo: 'us', speed: 'standard' })
    ok(r.content.some((b) => b.type === 'text'), JSON.stringify(r.content))
    return r.stop_reason ?? ''
  })
  await check('messages.countTokens mock-claude with thinking, tool_choice, output_config, cache_control', async () => {
    const r = await an.messages.countTokens({ model: CLAUDE, messages: [{ role: 'user', content: 'count' }], thinking: { type: 'enabled', budget_tokens: 1024 }, tool_choice: { type: 'auto' }, tools: [{ name: 't', input_schema: { type: 'object' } }], output_config: { effort: 'low' }, cache_control: { type: 'ephemeral' }, speed: 'standard' })
    ok(r.input_tokens > 0, JSON.stringify(r))
    return String(r.input_tokens)
  })
  await check('beta.messages.create mock-claude with betas (anthropic-beta header)', async () => {
    const r = await an.beta.messages.create({ model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: 'mock: text b' }], betas: ['context-management-2025-06-27'] })
    ok(r.content[0]?.type === 'text', JSON.stringify(r))
    return r.id
  })
  await check('messages.batches.list after_id / before_id', async () => {
    const ids: string[] = []
    for (let i = 0; i < 2; i++) ids.push((await an.messages.batches.create({ requests: [{ custom_id: 'x', params: { model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] } }] })).id)
    const first = await an.messages.batches.list({ limit: 1 })
    const after = await an.messages.batches.list({ limit: 1, after_id: first.data[0]!.id })
    const before = await an.messages.batches.list({ limit: 1, before_id: after.data[0]!.id })
    ok(first.data.length === 1 && after.data.length === 1 && before.data[0]?.id === first.data[0]!.id, `${first.data[0]?.id} ${after.data[0]?.id} ${before.data[0]?.id}`)
    return 'ok'
  })
  await check('models.list after_id / before_id, lifecycle', async () => {
    const first = await an.models.list({ limit: 1 })
    const after = await an.models.list({ limit: 1, after_id: first.data[0]!.id })
    const life = await an.models.list({ lifecycle: ['active'] })
    ok(after.data[0]?.id !== first.data[0]!.id && life.data.length > 0, 'pages')
    return `${first.data[0]!.id} → ${after.data[0]?.id}`
  })
  await check('files.list (Anthropic) ids, page cursor, scope_id', async () => {
    const a = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('1'), 'one.txt') })
    const b = await an.files.upload({ file: await Anthropic.toFile(Buffer.from('2'), 'two.txt') })
    const byIds = await an.files.list({ ids: [a.id] })
    const page = await an.beta.files.list({ limit: 1 })
    ok(byIds.data.length === 1 && byIds.data[0]!.id === a.id, JSON.stringify(byIds.data.map((x) => x.id)))
    ok(page.data.length === 1 && page.hasNextPage(), 'next page')
    const scoped = await an.beta.files.list({ scope_id: 'sesn_x' })
    ok(scoped.data.length === 0, `${scoped.data.length} files in a session scope`)
    await an.files.delete(a.id)
    await an.files.delete(b.id)
    return 'ok'
  })
  await check('unified root: messages via an Anthropic client at /api', async () => {
    const u = new Anthropic({ apiKey: key, baseURL: `${url}/api`, maxRetries: 0 })
    const r = await u.messages.create({ model: CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'mock: text u' }] })
    ok(r.content[0]?.type === 'text' && r.content[0].text === 'u', JSON.stringify(r))
    return r.id
  })
}
