// Every field the openai SDK's Response type declares required (`access_programs` among them;
// null where the type allows) is in the gateway's Response, plain, streamed (the
// response.completed event's) and retrieved: a typed client reads them as present.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { missingFields } from '../helpers/sdk-required.ts'

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.stop())

for (const model of ['mock-gpt', 'mock-claude']) {
  test(`${model}: the Response carries every field the SDK declares, plain, streamed and retrieved`, async () => {
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
    const plain = await client.responses.create({ model, input: 'mock: text hi' })
    let streamed: OpenAI.Responses.Response | undefined
    for await (const e of await client.responses.create({ model, input: 'mock: text hi', stream: true })) if (e.type === 'response.completed') streamed = e.response
    const retrieved = await client.responses.retrieve(plain.id)
    for (const r of [plain, streamed!, retrieved]) {
      expect(missingFields(r, 'openai', 'responses/responses.d.ts', 'Response')).toEqual([])
      expect(r.access_programs).toBeNull()
    }
  })
}
