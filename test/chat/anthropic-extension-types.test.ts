// The Anthropic extensions the chat surface carries to a Claude model (`container`,
// `inference_geo`) and the messages surface's `speed` are checked as the messages surface
// checks them: a value of the wrong type is the gateway's 400 naming the field, before any
// upstream call. Unchecked, `container: ["cntr_…"]` (an array) went to the upstream as it came,
// past the container grants that only read a string or an object's id.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startRig, type Rig } from './e2e-helpers.ts'

let rig: Rig
beforeAll(async () => {
  rig = await startRig()
})
afterAll(async () => {
  await rig.stop()
})

const ask = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }

test('chat: a container that is neither an id nor an object, or an inference_geo not a string, is a 400 naming it', async () => {
  const before = rig.up.requests.length
  for (const [field, value] of [['container', ['cntr_of_another_key']], ['container', 5], ['inference_geo', 5], ['inference_geo', { us: true }]] as const) {
    const res = await rig.post({ ...ask, [field]: value })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: unknown }
    expect(JSON.stringify(body.error)).toContain(field)
  }
  expect(rig.up.requests.length).toBe(before)
})

test('messages: a speed that is not a string is a 400 naming it', async () => {
  const before = rig.up.requests.length
  for (const speed of [5, { fast: true }, ['fast']]) {
    const res = await fetch(`${rig.gw.url}/api/beta/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': rig.gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-opus-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], speed }),
    })
    expect(res.status).toBe(400)
    expect(JSON.stringify(await res.json())).toContain('speed')
  }
  expect(rig.up.requests.length).toBe(before)
})
