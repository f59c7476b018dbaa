// `stream_options` on the responses surface holds `include_obfuscation` alone (a boolean), as
// chat's holds its two: anything else in it (chat's `include_usage`, a misspelling, a string for
// the boolean) was taken and dropped unsaid; it is a 400 naming the member.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
let openai: OpenAI
beforeAll(async () => {
  gw = await startGateway()
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await gw?.stop()
})

const BAD: [unknown, string][] = [
  [{ include_usage: true }, 'stream_options.include_usage'],
  [{ include_obfuscaton: false }, 'stream_options.include_obfuscaton'],
  [{ include_obfuscation: 'no' }, 'stream_options.include_obfuscation'],
]

for (const model of ['mock-gpt', 'mock-claude']) {
  test(`${model}: a stream_options member the responses surface does not have is a 400 naming it`, async () => {
    for (const [so, field] of BAD) {
      for (const stream of [true, false]) {
        const err = await openai.responses.create({ model, input: 'hi', stream, stream_options: so } as never).then(() => undefined, (e: unknown) => e)
        expect(err).toBeInstanceOf(OpenAI.BadRequestError)
        const e = err as InstanceType<typeof OpenAI.BadRequestError>
        expect([JSON.stringify(so), stream, e.message.includes(field), !!e.headers?.get('x-request-id')]).toEqual([JSON.stringify(so), stream, true, true])
      }
    }
  })
}

test('include_obfuscation as a boolean still streams', async () => {
  const s = await openai.responses.create({ model: 'mock-gpt', input: 'hi', stream: true, stream_options: { include_obfuscation: false } })
  let done = false
  for await (const ev of s) if (ev.type === 'response.completed') done = true
  expect(done).toBe(true)
})
