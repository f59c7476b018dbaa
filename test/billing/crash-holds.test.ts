// A gateway killed outright (kill -9) while a funded key's requests run leaves their holds
// behind wherever holds outlive the process (PostgreSQL's rows). Those requests are gone with
// the process: the key must be served again as soon as the gateway is back, not refused with a
// 402 about "requests in progress" until the holds lapse on their own. On SQLite the holds are
// in memory and go with the process; the test holds there too.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

const ADMIN = 'admin-crash-holds'
let up: FakeUpstream
let hang = true
const never = new Promise<void>(() => {})

beforeAll(async () => {
  up = await startFakeUpstream()
  const enc = new TextEncoder()
  up.script((req) => {
    if (!hang) return { json: fixtureJson('openai/chat/nonstream-text.json') }
    // a reply that has begun and never ends: the request is in flight when the process dies
    const body = new ReadableStream({
      async start(c) {
        c.enqueue(enc.encode(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: req.json().model, choices: [{ index: 0, delta: { role: 'assistant', content: 'Once' }, finish_reason: null }] })}\n\n`))
        await never
      },
    })
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
  })
})

afterAll(async () => {
  await up?.stop()
})

const chat = (url: string, key: string, stream: boolean) =>
  fetch(`${url}/api/alpha/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    // gpt-4o, 900 tokens out: about $0.0093 held; a cent admits two at once, not three
    body: JSON.stringify({ model: 'gpt-4o', max_tokens: 900, stream, messages: [{ role: 'user', content: 'A story' }] }),
  })

test('after a kill -9 with two requests in flight, the restarted gateway serves the key at once', async () => {
  const dataDir = tempDir()
  const env = { ...upstreamEnv(up), SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-crash-holds-0123456789' }
  let first: Spawned | undefined
  let second: Spawned | undefined
  try {
    first = await spawnGateway({ env, dataDir })
    const made = await fetch(`${first.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'crash holds', credits: 0.01 }) })
    expect(made.status).toBe(201)
    const key = ((await made.json()) as { key: string }).key

    const inFlight = [await chat(first.url, key, true), await chat(first.url, key, true)]
    expect(inFlight.map((r) => r.status)).toEqual([200, 200])
    // the two holds use up the cent: a third is refused while they run
    expect((await chat(first.url, key, true)).status).toBe(402)

    first.kill('SIGKILL')
    await first.exited
    hang = false

    second = await spawnGateway({ env, dataDir })
    const r = await chat(second.url, key, false)
    const text = await r.text()
    expect({ status: r.status, text: r.status === 200 ? '' : text }).toEqual({ status: 200, text: '' })
  } finally {
    hang = true
    first?.kill('SIGKILL')
    second?.kill('SIGTERM')
    await second?.exited
    cleanup(dataDir)
  }
}, 60_000)
