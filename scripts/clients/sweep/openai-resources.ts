// The sweep of the openai client's conversations, files, batches and models (sdk-sweep.ts).
import { toFile } from 'openai'
import { ok, refused } from './checks.ts'
import { GPT, MODELS, type Sweep } from './context.ts'

/** conversations and their items, and a response in one. */
export async function conversations({ oa, check }: Sweep): Promise<void> {
  for (const model of MODELS) {
    let conv = ''
    let itemId = ''
    await check(`conversations.create ${model}`, async () => {
      const c = await oa.conversations.create({ metadata: { topic: 'sweep' }, items: [{ type: 'message', role: 'user', content: 'first' }] })
      ok(c.object === 'conversation' && c.id.startsWith('conv_'), JSON.stringify(c))
      conv = c.id
      return conv
    })
    await check(`conversations.retrieve/update ${model}`, async () => {
      const r = await oa.conversations.retrieve(conv)
      const u = await oa.conversations.update(conv, { metadata: { topic: 'changed' } })
      ok(r.id === conv && (u.metadata as Record<string, string>)?.topic === 'changed', JSON.stringify(u))
      return JSON.stringify(u.metadata)
    })
    await check(`conversations.items.create/list/retrieve ${model}`, async () => {
      const added = await oa.conversations.items.create(conv, { items: [{ type: 'message', role: 'user', content: 'second' }], include: [] })
      ok(added.object === 'list' && added.data.length === 1, JSON.stringify(added))
      const all = []
      for await (const it of oa.conversations.items.list(conv, { limit: 1, order: 'asc' })) all.push(it)
      ok(all.length === 2, `${all.length} items`)
      itemId = all[1]!.id!
      const one = await oa.conversations.items.retrieve(itemId, { conversation_id: conv })
      ok(one.id === itemId, JSON.stringify(one))
      return `${all.length} items`
    })
    await check(`responses.create ${model} in a conversation`, async () => {
      const r = await oa.responses.create({ model, conversation: conv, input: 'mock: text in conv' })
      ok(r.output_text === 'in conv', r.output_text)
      const items = await oa.conversations.items.list(conv)
      ok(items.data.length === 4, `${items.data.length} items`)
      return `${items.data.length} items`
    })
    await check(`conversations.items.delete / delete ${model}`, async () => {
      const c = await oa.conversations.items.delete(itemId, { conversation_id: conv })
      ok(c.id === conv && c.object === 'conversation', JSON.stringify(c))
      const d = await oa.conversations.delete(conv)
      ok(d.deleted === true && d.id === conv, JSON.stringify(d))
      return JSON.stringify(d)
    })
  }
}

/** files (toFile, list, content, delete), a batch run to its output, models. */
export async function filesBatchesModels({ oa, check }: Sweep): Promise<void> {
  let fileId = ''
  await check('files.create toFile', async () => {
    const f = await oa.files.create({ file: await toFile(Buffer.from('hello file\n'), 'hello.txt', { type: 'text/plain' }), purpose: 'user_data' })
    ok(f.object === 'file' && f.filename === 'hello.txt' && f.bytes === 11, JSON.stringify(f))
    fileId = f.id
    return `${f.id} purpose=${f.purpose} status=${f.status}`
  })
  await check('files.create with expires_after', async () => {
    const f = await oa.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants', expires_after: { anchor: 'created_at', seconds: 3600 } })
    ok(f.object === 'file', JSON.stringify(f))
    return `${f.id} expires_at=${f.expires_at}`
  })
  await check('files.retrieve / waitForProcessing', async () => {
    const f = await oa.files.retrieve(fileId)
    const w = await oa.files.waitForProcessing(fileId, { pollInterval: 50, maxWait: 5000 })
    ok(f.id === fileId && w.id === fileId, 'ids')
    return `${f.status} / ${w.status}`
  })
  await check('files.list for await (limit, order, purpose)', async () => {
    const ids: string[] = []
    for await (const f of oa.files.list({ limit: 1, order: 'desc', purpose: 'user_data' })) ids.push(f.id)
    ok(ids.includes(fileId), ids.join(','))
    const all: string[] = []
    for await (const f of oa.files.list({ limit: 1 })) all.push(f.id)
    ok(all.length === 2, `${all.length} without purpose`)
    return ids.join(',')
  })
  await check('files.content', async () => {
    const res = await oa.files.content(fileId)
    const t = await res.text()
    ok(t === 'hello file\n', t)
    return t.trim()
  })

  let batchId = ''
  await check('batches.create (input_file_id, endpoint, completion_window)', async () => {
    const lines = MODELS.map((m, i) => JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: m, messages: [{ role: 'user', content: `mock: text b${i}` }] } })).join('\n')
    const input = await oa.files.create({ file: await toFile(Buffer.from(lines + '\n'), 'batch.jsonl'), purpose: 'batch' })
    const b = await oa.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { sweep: '1' } })
    ok(b.object === 'batch' && b.endpoint === '/v1/chat/completions', JSON.stringify(b))
    batchId = b.id
    return `${b.id} ${b.status}`
  })
  await check('batches.retrieve until completed; output file content', async () => {
    let b = await oa.batches.retrieve(batchId)
    for (let i = 0; i < 100 && !['completed', 'failed', 'expired', 'cancelled'].includes(b.status); i++) {
      await Bun.sleep(100)
      b = await oa.batches.retrieve(batchId)
    }
    ok(b.status === 'completed' && b.output_file_id, JSON.stringify(b))
    const out = await (await oa.files.content(b.output_file_id)).text()
    const lines = out.trim().split('\n').map((l) => JSON.parse(l))
    ok(lines.length === 2 && lines.every((l) => l.response?.status_code === 200), out.slice(0, 300))
    return `${b.status} counts=${JSON.stringify(b.request_counts)}`
  })
  await check('batches.list for await', async () => {
    const ids: string[] = []
    for await (const b of oa.batches.list({ limit: 1 })) ids.push(b.id)
    ok(ids.includes(batchId), ids.join(','))
    return ids.join(',')
  })
  await check('batches.cancel (an ended batch)', async () => {
    try {
      const b = await oa.batches.cancel(batchId)
      return `${b.status}`
    } catch (e) {
      const err = e as { status?: number; error?: unknown }
      ok(err.status === 400 || err.status === 409, `status ${err.status}`)
      return `${err.status} ${JSON.stringify(err.error).slice(0, 80)}`
    }
  })
  await check('files.delete', async () => {
    const d = await oa.files.delete(fileId)
    ok(d.deleted === true && d.id === fileId && d.object === 'file', JSON.stringify(d))
    return JSON.stringify(d)
  })
  await check('models.list for await / retrieve', async () => {
    const ids: string[] = []
    for await (const m of oa.models.list()) ids.push(m.id)
    ok(ids.includes(GPT) || ids.length > 0, 'none')
    const m = await oa.models.retrieve(ids[0]!)
    ok(m.object === 'model' && m.id === ids[0], JSON.stringify(m))
    return `${ids.length} models`
  })
  await check('models.delete → clear JSON error', () => refused(() => oa.models.delete('mock-gpt'), /./))
}
