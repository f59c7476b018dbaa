// A stop (SIGTERM) lets a conversation turn's items be written before the database closes: a
// reply goes out once its turn is added, or after 5 s when the store is slower than that, and
// a stop that came then closed the database under the write, so the turn's response was stored
// and its conversation never had it.
import { expect, test } from 'bun:test'
import OpenAI from 'openai'
import { rmSync } from 'node:fs'
import { conversationStoreOf } from '../../src/surfaces/responses/conversations/store.ts'
import { dropDatabaseFor } from '../helpers/database.ts'
import { startGateway, tempDir } from '../helpers/server.ts'

test('a stop waits for a conversation turn whose write outlasted its reply, and the turn is there after a restart', async () => {
  const dataDir = tempDir()
  try {
    const gw = await startGateway({ dataDir })
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    const conv = await client.conversations.create()
    // the store as slow as one held by a lock: the turn's write begins after the reply's wait has given up
    const store = conversationStoreOf(gw.services)
    const append = store.append.bind(store)
    store.append = async (id, items) => {
      await Bun.sleep(6_000)
      return append(id, items)
    }
    const r = await client.responses.create({ model: 'mock-gpt', conversation: conv.id, input: 'mock: text kept' })
    expect(r.output_text).toBe('kept')
    await gw.stop()

    const again = await startGateway({ dataDir, env: { SWITCHYARD_BOOTSTRAP_KEY: gw.key } })
    try {
      const listed = await fetch(`${again.url}/api/alpha/v1/conversations/${conv.id}/items?order=asc`, { headers: { authorization: `Bearer ${gw.key}` } })
      expect(listed.status).toBe(200)
      const data = ((await listed.json()) as any).data
      expect(data.map((it: any) => it.role)).toEqual(['user', 'assistant'])
      expect(data[1].id).toBe(r.output[0]!.id)
    } finally {
      await again.stop()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    await dropDatabaseFor(dataDir)
  }
}, 30_000)
