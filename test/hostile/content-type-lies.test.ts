// An upload whose Content-Type lies (text sent as image/png) and is then named in a request:
// the 400 names the block and says the content is not the image it was declared as. It said
// "image/png is not an image format the upstreams take (PNG, …)", which reads as a refusal of PNG.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import OpenAI, { toFile } from 'openai'
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

for (const model of ['mock-gpt', 'mock-claude']) {
  test(`${model}: a file declared image/png that holds text is a 400 saying the content is not one`, async () => {
    const f = await openai.files.create({ file: await toFile(Buffer.from('not a png at all'), 'x.png', { type: 'image/png' }), purpose: 'vision' })
    const err = await openai.chat.completions
      .create({ model, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: f.id } }, { type: 'text', text: 'hi' }] }] })
      .then(() => undefined, (e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    const e = err as InstanceType<typeof OpenAI.BadRequestError>
    expect(e.message).toContain('messages[0].content[0].file.file_id: declared as image/png, but the content is not a PNG, JPEG, GIF or WebP image')
    expect(e.headers?.get('x-request-id')).toBeTruthy()
  })
}
