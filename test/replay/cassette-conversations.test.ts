// Turns in a conversation of the Conversations API, recorded and replayed: the upstream body a
// cassette matches on is the one the gateway sends, the conversation's items in it, so a replay
// of the same conversation answers from the cassette and adds each turn to its conversation as
// the recording did, and one whose items differ is a miss that names where (and adds nothing).
import { expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, tempDir, type Gateway } from '../helpers/server.ts'
import { anthropicReply, gatewayOn, openaiReply } from './rig.ts'

async function turns(gw: Gateway, first: string) {
  const c = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  const conv = await c.conversations.create({ items: [{ type: 'message', role: 'user', content: first }] })
  const out: string[] = []
  for (const model of ['gpt-5.2', 'claude-sonnet-4-5']) {
    for (const q of ['q1', 'q2']) out.push(await c.responses.create({ model, conversation: conv.id, input: `${q} ${model}` }).then((r) => r.output_text, (e) => `${e.status} ${e.message}`))
  }
  const items = (await c.conversations.items.list(conv.id, { order: 'asc', limit: 100 })).data
  return { out, items: items.map((it: any) => `${it.role}: ${it.content.map((p: any) => p.text).join('')}`) }
}

test('a conversation replayed from its cassette gets its turns; other items in it are a miss naming them', async () => {
  const dir = tempDir('switchyard-cassettes-conv-')
  const [openai, anthropic] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
  openai.script(openaiReply)
  anthropic.script(anthropicReply)
  try {
    const rec = await gatewayOn({ openai, anthropic }, `  mode: record\n  dir: ${dir}`)
    const recorded = await turns(rec, 'remember: heron')
    await rec.stop()
    expect(recorded.items.length).toBe(9)
    await Promise.all([openai.stop(), anthropic.stop()])

    const rep = await gatewayOn({ openai, anthropic }, `  mode: replay\n  dir: ${dir}`, { keys: false })
    try {
      expect(await turns(rep, 'remember: heron')).toEqual(recorded)
      const other = await turns(rep, 'remember: crane')
      for (const o of other.out) expect(o).toMatch(/^424 .*cassette miss: .*differs at body\.(input|messages)\.0\.content\.0\.text/)
      expect(other.items).toEqual(['user: remember: crane'])
    } finally {
      await rep.stop()
    }
  } finally {
    cleanup(dir)
  }
})
