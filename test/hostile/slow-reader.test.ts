// A client that opens a long stream and stops reading. The gateway must wait for the socket
// (its source is held, not run ahead into memory), and when the client leaves, the stream
// ends, the generation is recorded as a disconnect billed for what was produced, and the
// open-streams gauge falls back to zero.
import { expect, test } from 'bun:test'
import { connect } from 'node:net'
import { total, parseMetrics } from '../metrics/parse.ts'
import { startGateway } from '../helpers/server.ts'

// a reply far past what the sockets' buffers hold (a few MB on loopback)
const WORDS = 2_500_000

test('a reader that stops holds the stream at the socket; when it leaves, the record is a 499 billed for what was produced', async () => {
  const g = await startGateway({ yaml: 'metrics: { public: true }\n' })
  const open = async () => total(parseMetrics(await (await fetch(g.url + '/metrics')).text()), 'switchyard_open_streams')
  try {
    // the mock sends a long text in 1,024 chunks, as fast as it is let: about 22 MB of frames in all
    const text = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ')
    const body = JSON.stringify({ model: 'mock-gpt', stream: true, messages: [{ role: 'user', content: `mock: text ${text}` }] })
    const url = new URL(g.url)
    const socket = connect(Number(url.port), url.hostname)
    socket.pause()
    socket.write(
      `POST /api/alpha/v1/chat/completions HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${g.key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    // the stream opens once the prompt is read and counted (seconds, for 20 MB, on a busy machine)
    for (const until = Date.now() + 30_000; (await open()) !== 1 && Date.now() < until; ) await Bun.sleep(25)
    expect(await open()).toBe(1)
    // long enough for the mock to have sent everything, were it not held
    await Bun.sleep(2_000)
    expect(await open()).toBe(1)
    socket.destroy()
    for (const until = Date.now() + 5_000; (await open()) !== 0 && Date.now() < until; ) await Bun.sleep(25)
    expect(await open()).toBe(0)

    let record: { http_status: number; error: string | null; usage: { completion_tokens: number } } | undefined
    for (const until = Date.now() + 5_000; !record && Date.now() < until; await Bun.sleep(25)) {
      const list = (await (await fetch(`${g.url}/api/v1/generations?limit=1`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as { data: (typeof record)[] }
      record = list.data[0]
    }
    expect(record?.http_status).toBe(499)
    expect(record?.error).toBe('client disconnected')
    // billed for what was produced before the client left: some of the reply, far from all of it
    expect(record!.usage.completion_tokens).toBeGreaterThan(0)
    // (each word is two tokens or more, a letter and its number: under half of the reply)
    expect(record!.usage.completion_tokens).toBeLessThan(WORDS)
  } finally {
    await g.stop()
  }
}, 60_000)
