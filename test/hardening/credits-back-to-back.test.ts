// A funded key whose credit is less than one request's worst case is served one request at a
// time: each holds that worst case while it runs. An agent loop sends its next turn the moment
// the last reply ended; the last one's hold must be gone by then, or the key is refused with a
// 402 it cannot act on (credits are not exhausted). The gateway runs in a process of its own, as
// in use: in this process the test's own awaits would give the gateway's loop the turns it
// needs, and hide the race.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { fixture, fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { spawnGateway, type Spawned } from '../helpers/server.ts'

const ADMIN = 'admin-back-to-back'
let up: FakeUpstream
let gw: Spawned

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req) =>
    req.path.endsWith('/responses')
      ? { json: { ...fixtureJson('openai/responses/nonstream-text.json'), id: `resp_${crypto.randomUUID().replaceAll('-', '')}` } }
      : { sse: fixture('anthropic/messages/stream-text.sse'), delayMs: 0 },
  )
  gw = await spawnGateway({ env: { ...upstreamEnv(up), SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-back-to-back-0123456789' } })
})

afterAll(async () => {
  gw?.kill()
  await gw?.exited
  await up?.stop()
})

async function fundedKey(credits: number): Promise<string> {
  const r = await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `back to back ${Math.random()}`, credits }) })
  expect(r.status).toBe(201)
  return ((await r.json()) as { key: string }).key
}

const turns: [string, Record<string, unknown>][] = [
  ['a stored response, relayed as JSON', { model: 'gpt-5-mini', input: 'hello' }],
  ['a Claude model streamed through responses', { model: 'claude-sonnet-4-5', input: 'hello', stream: true, max_output_tokens: 1000 }],
]

for (const [name, body] of turns) {
  test(`${name}: 30 turns back to back on a key funded for less than one worst case are all served`, async () => {
    // a cent: far more than these turns cost, less than what each holds while it runs
    const key = await fundedKey(0.01)
    const refused: string[] = []
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${gw.url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      const text = await r.text()
      if (r.status !== 200) refused.push(`turn ${i}: ${r.status} ${text.slice(0, 200)}`)
    }
    expect(refused).toEqual([])
  }, 30_000)
}
