// A pass-through stream's client gets the upstream's bytes exactly, less only what the tap
// takes out, whatever the shape of the upstream's reads: whole events alone, two in one read,
// one cut in two, a character's bytes cut between reads. And the record reads the same.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { fixture } from '../helpers/fake-upstream.ts'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig()
})
afterAll(async () => {
  await rig.stop()
})

const enc = new TextEncoder()

/** The SSE text's events, each with its blank line. */
const eventsOf = (sse: string) => sse.match(/[\s\S]*?\n\n/g)!

/**
 * Reads of every shape from `events`: whole events alone, two in one read, one cut in two, and
 * the event holding `cutIn` cut inside that character's bytes.
 */
function reads(events: string[], cutIn: string): Uint8Array[] {
  const out: Uint8Array[] = []
  for (let i = 0; i < events.length; i++) {
    const bytes = enc.encode(events[i]!)
    const at = events[i]!.indexOf(cutIn)
    if (at >= 0) {
      const cut = enc.encode(events[i]!.slice(0, at)).length + 1
      out.push(bytes.slice(0, cut), bytes.slice(cut))
    } else if (i % 5 === 2) {
      const half = Math.floor(bytes.length / 2)
      out.push(bytes.slice(0, half), bytes.slice(half))
    } else if (i % 5 === 3 && i + 1 < events.length) {
      out.push(enc.encode(events[i]! + events[++i]!))
    } else out.push(bytes)
  }
  return out
}

function upstream(chunks: Uint8Array[]) {
  return () => {
    let i = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (i >= chunks.length) return c.close()
        // a pause between writes, so that each is a read of its own at the gateway
        if (i > 0) await Bun.sleep(2)
        c.enqueue(chunks[i++]!)
      },
    })
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
  }
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${rig.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  return new Uint8Array(await res.arrayBuffer())
}

/** A chat stream with a text delta that holds characters of two, three and four bytes. */
function chatSse(): string {
  const events = eventsOf(fixture('openai/chat/stream-text-include-usage.sse'))
  const second = events[1]!
  const wide = second.replace(/"content":"(?:[^"\\]|\\.)*"/, '"content":" naïve 日本 🙂"')
  return [events[0]!, wide, ...events.slice(1)].join('')
}

describe('the pass-through relay, byte for byte', () => {
  test('chat, the client asking for usage: the upstream bytes whatever the reads; id, usage and finish recorded', async () => {
    const sse = chatSse()
    rig.up.script(upstream(reads(eventsOf(sse), '日')))
    const got = await post('/api/alpha/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
    expect(Buffer.from(got).equals(Buffer.from(enc.encode(sse)))).toBe(true)
    const id = /"id":"([^"]+)"/.exec(sse)![1]!
    const g = await rig.generation(id)
    expect(g.usage.prompt_tokens).toBe(78)
    expect(g.usage.completion_tokens).toBe(9)
    expect(g.finish_reason).toBe('stop')
  })

  test('chat, the client not asking for usage: each `"usage":null` cut and the usage chunk dropped, the rest as it came', async () => {
    const sse = chatSse()
    rig.up.script(upstream(reads(eventsOf(sse), '🙂')))
    const got = new TextDecoder().decode(await post('/api/alpha/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }))
    const want = eventsOf(sse)
      .filter((e) => !e.includes('"choices":[]'))
      .map((e) => e.replace(',"usage":null', ''))
      .join('')
    expect(got).toBe(want)
    expect(got).toContain(' naïve 日本 🙂')
  })

  test('messages: the upstream bytes whatever the reads, through the Anthropic SDK too', async () => {
    const sse = fixture('anthropic/messages/stream-text.sse')
    const events = eventsOf(sse)
    const wide = events.map((e) => (e.includes('"text_delta"') ? e.replace(/"text":"(?:[^"\\]|\\.)*"/, '"text":"über 한국어 🙂"') : e)).join('')
    rig.up.script(upstream(reads(eventsOf(wide), '국')))
    const got = await post('/api/beta/v1/messages', { model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream: true }, { 'anthropic-version': '2023-06-01' })
    expect(Buffer.from(got).equals(Buffer.from(enc.encode(wide)))).toBe(true)

    rig.up.script(upstream(reads(eventsOf(wide), '🙂')))
    const client = new Anthropic({ apiKey: rig.gw.key, baseURL: `${rig.gw.url}/api/beta`, maxRetries: 0 })
    const stream = client.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
    const text = await stream.finalText()
    expect(text).toContain('über 한국어 🙂')
  })
})
