// A connection no key holds (keep-alive after /health, a request not yet authenticated) is closed
// after `limits.idle_timeout_s` of silence: 20,000 idle keep-alive connections once held every
// file descriptor for four minutes. A key's request may still wait in silence for minutes (a
// long generation's first byte, a JSON reply): its connection is held for that.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { fixtureJson } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig({ SWITCHYARD_IDLE_TIMEOUT_S: '2' })
})
afterAll(() => rig.stop())

/** A raw connection: what it received, and when it was closed (ms after it opened), if it was. */
function open(): Promise<{ socket: Socket; text: () => string; closedAfter: () => number | null }> {
  const port = Number(new URL(rig.gw.url).port)
  return new Promise((resolve) => {
    const t0 = performance.now()
    let closed: number | null = null
    let got = ''
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, text: () => got, closedAfter: () => closed }))
    socket.on('data', (d) => (got += d.toString()))
    socket.on('close', () => (closed = performance.now() - t0))
    socket.on('error', () => {})
  })
}

// (the two tests, and the two connections of the first, wait side by side: each is mostly waiting)
test.concurrent('an idle keep-alive connection is closed after the idle timeout, after /health and after a request of a key', async () => {
  const requests = ['GET /health HTTP/1.1\r\nHost: x\r\n\r\n', `GET /api/alpha/v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${rig.gw.key}\r\n\r\n`]
  await Promise.all(
    requests.map(async (request) => {
      const c = await open()
      c.socket.write(request)
      for (let i = 0; i < 400 && c.closedAfter() === null; i++) await Bun.sleep(20)
      expect(c.text()).toStartWith('HTTP/1.1 200')
      const closed = c.closedAfter()
      expect(closed).not.toBeNull()
      expect(closed!).toBeLessThan(7_000)
    }),
  )
})

test.concurrent("a key's request waits past the idle timeout for a slow upstream, JSON and streamed", async () => {
  const reply = fixtureJson('openai/chat/nonstream-text.json')
  const sse = `data: ${JSON.stringify({ id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`
  // both at once: the upstream answers each after 6 s, in the shape it asked for
  rig.up.script((req) => (req.json().stream ? { waitMs: 6_000, sse } : { waitMs: 6_000, json: reply }))
  const json = async () => {
    const r = await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow' }] })
    expect(r.choices[0]!.message.content).toBe(reply.choices[0].message.content)
  }
  const streamed = async () => {
    let text = ''
    for await (const chunk of await rig.client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'slow' }] })) text += chunk.choices[0]?.delta.content ?? ''
    expect(text).toBe('late')
  }
  await Promise.all([json(), streamed()])
}, 30_000)
