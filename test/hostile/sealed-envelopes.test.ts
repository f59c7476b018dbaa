// The gateway's sealed reasoning (a Claude model's thinking or web search in a reasoning item's
// `encrypted_content`, for a client that keeps the conversation itself) comes back written as the
// client likes. What is in it is parsed on the request thread, past the checks the body had, so
// it is held to the body's rules: a million parts hidden in envelopes is a 400 naming the item,
// before any parse (a two-million-deep one held the loop for about half a second to parse, then
// overflowed the stack where the search's content was used: a 502), and one nested past the
// body's depth is not the gateway's and is left out.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { leastGap } from '../helpers/loop-gap.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_IP_RPM: '100000' } })
})
afterAll(async () => {
  await gw.stop()
})

const seal = (json: string) => 'sy1.' + Buffer.from(json).toString('base64url')
/** A sealed search whose result content is nested `depth` arrays deep. */
const deepSearch = (depth: number) => seal(`{"w":{"id":"srvtoolu_x","input":{"query":"q"},"content":${'['.repeat(depth)}${']'.repeat(depth)}}}`)
/** A sealed search whose result content is `n` empty objects. */
const wideSearch = (n: number) => seal(`{"w":{"id":"srvtoolu_x","input":{"query":"q"},"content":[${Array(n).fill('{}').join(',')}]}}`)

async function send(envelopes: string[]) {
  const input = [{ role: 'user', content: 'q' }, ...envelopes.map((e) => ({ type: 'reasoning', summary: [], encrypted_content: e })), { role: 'user', content: 'mock: text ok' }]
  const res = await fetch(`${gw.url}/api/alpha/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', store: false, tools: [{ type: 'web_search' }], input }),
  })
  expect(res.headers.get('x-request-id')).toBeTruthy()
  const body = (await res.json()) as { error?: string; output_text?: string }
  return { ...body, code: res.status }
}

describe('sealed reasoning sent back', () => {
  test('a million parts in one envelope is a 400 naming it, and holds the loop no longer than a scan', async () => {
    const r = await send([deepSearch(2_000_000)])
    expect(r.code).toBe(400)
    expect(r.error).toStartWith('input[1].encrypted_content: holds more than 200000 JSON objects and arrays')
    expect(await leastGap(() => send([deepSearch(2_000_000)]))).toBeLessThan(200)
  })

  test('the bound is for the envelopes of the request together', async () => {
    const each = wideSearch(60_000)
    expect((await send([each, each])).code).toBe(200)
    const r = await send([each, each, each])
    expect(r.code).toBe(400)
    expect(r.error).toStartWith('input[3].encrypted_content:')
  })

  test('one nested past the body\'s depth is left out: the turn goes on without it', async () => {
    for (const depth of [65, 50_000]) {
      const r = await send([deepSearch(depth)])
      expect(r.code).toBe(200)
      expect(r.output_text).toBe('ok')
    }
  })

  test('one that is not JSON, or not the gateway\'s shape, is left out as before', async () => {
    for (const e of [seal('not json'), seal('[1,2]'), seal('{"w":[]}'), seal('{"__proto__":{"t":"a","s":"b"}}'), 'sy1.@@@']) {
      const r = await send([e])
      expect(r.code).toBe(200)
      expect(r.output_text).toBe('ok')
    }
  })
})
