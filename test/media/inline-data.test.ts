// Inline base64 media (a chat data URL, a Responses input_image or input_file, a messages
// base64 source) is checked at the gateway, on every surface and for both families: data that
// is empty, not base64, an image format no upstream takes, or not what it was declared as is a
// 400 naming the field, and nothing reaches the upstream. An image whose bytes are another
// format than declared goes as the format its bytes are, as an uploaded file does.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture } from '../helpers/fake-upstream.ts'
import { startMessagesRig, type MessagesRig } from '../messages/e2e-helpers.ts'
import { PDF, PNG } from './helpers.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  // every bad input on every surface and family: more requests a minute than a key's default
  rig = await startMessagesRig(NO_LIMITS)
})
afterAll(() => rig?.stop())

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64')
const SVG = b64('<svg xmlns="http://www.w3.org/2000/svg"/>')
/** A PNG in the URL-safe alphabet (bytes chosen to need its characters), and where the first of them is. */
const URL_SAFE = Buffer.concat([PNG, Buffer.from([0xfb, 0xff, 0xfe])]).toString('base64url')
const URL_SAFE_AT = URL_SAFE.search(/[-_]/)

/** [what, media type, data, the refusal's words]: each refused on every surface. */
const BAD_IMAGES = [
  ['not base64', 'image/png', '!!!@@@', 'not valid base64 data ("!" at character 0)'],
  ['empty', 'image/png', '', 'the base64 data is empty'],
  ['an SVG', 'image/svg+xml', SVG, '"image/svg+xml" is not an image format the upstreams take (PNG, JPEG, GIF, WebP)'],
  ['text declared as a PNG', 'image/png', b64('not a png at all'), 'declared as image/png, but the content is not a PNG, JPEG, GIF or WebP image'],
  ['a length no padding explains', 'image/png', b64(PNG.subarray(0, 27)) + 'A', 'not valid base64 data (a length of 37 characters, which no padding explains)'],
  ['in the URL-safe alphabet', 'image/png', URL_SAFE, `not valid base64 data (${JSON.stringify(URL_SAFE[URL_SAFE_AT])} at character ${URL_SAFE_AT}: the URL-safe alphabet; send standard base64, with + and / for - and _)`],
] as const

/** The SDK's error: its status, the gateway's `error` string (the openai SDK gives it as `error`, Anthropic's the body) and the request id. */
async function refused(p: Promise<unknown>): Promise<{ status?: number; message: string; id?: string | null }> {
  const e = (await p.then(() => undefined, (x: unknown) => x)) as { status?: number; error?: unknown; headers?: Headers } | undefined
  expect(e).toBeDefined()
  const body = e!.error as string | { error?: string } | undefined
  return { status: e!.status, message: typeof body === 'string' ? body : String(body?.error), id: e!.headers?.get('x-request-id') }
}

describe('chat', () => {
  for (const model of ['gpt-4o-mini', 'claude-sonnet-4-5']) {
    for (const [what, type, data, words] of BAD_IMAGES) {
      test(`${model}: an image_url data URL ${what} is a 400 naming the url, before any upstream call`, async () => {
        const before = rig.up.requests.length
        const e = await refused(rig.client.chat.completions.create({ model, max_tokens: 50, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url: `data:${type};base64,${data}` } }] }] }))
        expect(e.status).toBe(400)
        expect(e.message).toContain(`messages[1].content[1].image_url.url: ${words}`)
        expect(e.id).toBeTruthy()
        expect(rig.up.requests.length).toBe(before)
      })
    }
    test(`${model}: a file_data declared as a PDF that is not one, or not base64, is a 400 naming it`, async () => {
      const before = rig.up.requests.length
      for (const [data, words] of [[b64('hello'), 'declared as a PDF, but the content is not one'], ['%%%%', 'not valid base64 data']] as const) {
        const e = await refused(rig.client.chat.completions.create({ model, max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'Read it' }, { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${data}` } }] }] }))
        expect(e.status).toBe(400)
        expect(e.message).toContain(`messages[0].content[1].file.file_data: ${words}`)
      }
      expect(rig.up.requests.length).toBe(before)
    })
  }

  test('base64 wrapped in lines (the MIME form) is base64: it goes upstream, unwrapped', async () => {
    const flat = b64(Buffer.concat([PNG, Buffer.alloc(200)]))
    const wrapped = flat.replace(/.{76}/g, '$&\r\n')
    for (const [model, reply] of [['gpt-4o-mini', 'openai/chat/nonstream-text.json'], ['claude-sonnet-4-5', 'anthropic/messages/nonstream-text.json']] as const) {
      const before = rig.up.requests.length
      rig.up.script({ json: fixture(reply) })
      await rig.client.chat.completions.create({ model, max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${wrapped}` } }] }] })
      expect(rig.up.requests.length).toBe(before + 1)
      expect(JSON.stringify(rig.up.requests.at(-1)!.json())).toContain(flat)
    }
  })

  test('a PNG declared as image/jpeg goes as image/png, to either family', async () => {
    rig.up.script({ json: fixture('openai/chat/nonstream-text.json') })
    await rig.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${b64(PNG)}` } }] }] })
    expect(rig.up.requests.at(-1)!.json().messages[0].content[1].image_url.url).toBe(`data:image/png;base64,${b64(PNG)}`)
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${b64(PNG)}` } }] }] })
    expect(rig.up.requests.at(-1)!.json().messages[0].content[1].source).toEqual({ type: 'base64', media_type: 'image/png', data: b64(PNG) })
  })

  test('a claude model: a file_data of a type it cannot take is a 400 naming the field, not the part', async () => {
    const e = await refused(rig.client.chat.completions.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'Read it' }, { type: 'file', file: { filename: 'a.zip', file_data: `data:application/zip;base64,${b64('PK')}` } }] }] }))
    expect(e.message).toContain('messages[1].content[1].file.file_data: a "application/zip" document cannot go to a Claude model')
  })
})

describe('responses', () => {
  for (const model of ['gpt-4o-mini', 'claude-sonnet-4-5']) {
    for (const [what, type, data, words] of BAD_IMAGES) {
      test(`${model}: an input_image data URL ${what} is a 400 naming the image_url, before any upstream call`, async () => {
        const before = rig.up.requests.length
        const e = await refused(rig.client.responses.create({ model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is it?' }, { type: 'input_image', detail: 'auto', image_url: `data:${type};base64,${data}` }] }] }))
        expect(e.status).toBe(400)
        expect(e.message).toContain(`input[0].content[1].image_url: ${words}`)
        expect(e.id).toBeTruthy()
        expect(rig.up.requests.length).toBe(before)
      })
    }
    test(`${model}: an input_file file_data declared as a PDF that is not one is a 400 naming it`, async () => {
      const before = rig.up.requests.length
      const e = await refused(rig.client.responses.create({ model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'Read it' }, { type: 'input_file', filename: 'a.pdf', file_data: `data:application/pdf;base64,${b64('hello')}` }] }] }))
      expect(e.message).toContain('input[0].content[1].file_data: declared as a PDF, but the content is not one')
      expect(rig.up.requests.length).toBe(before)
    })
  }

  for (const model of ['gpt-4o-mini', 'claude-sonnet-4-5']) {
    test(`${model}: a tool output's image, and a screenshot, are checked as a message's are`, async () => {
      const before = rig.up.requests.length
      const call = { type: 'function_call' as const, call_id: 'call_1', name: 'look', arguments: '{}' }
      const output = { type: 'function_call_output' as const, call_id: 'call_1', output: [{ type: 'input_image' as const, detail: 'auto' as const, image_url: 'data:image/png;base64,!!!@@@' }] }
      const e = await refused(rig.client.responses.create({ model, input: [{ role: 'user', content: 'Look' }, call, output] }))
      expect(e.status).toBe(400)
      expect(e.message).toContain('input[2].output[0].image_url: not valid base64 data')
      const shot = { type: 'computer_call_output' as const, call_id: 'call_2', output: { type: 'computer_screenshot' as const, image_url: `data:image/png;base64,${b64('not a png')}` } }
      const s = await refused(rig.client.responses.create({ model, input: [{ role: 'user', content: 'Look' }, shot] }))
      expect(s.status).toBe(400)
      expect(s.message).toContain('input[1].output.image_url: declared as image/png, but the content is not a PNG, JPEG, GIF or WebP image')
      expect(rig.up.requests.length).toBe(before)
    })
  }

  test('a claude model: an input_file of a type it cannot take is a 400 naming the file_data as sent, not a translated message', async () => {
    const before = rig.up.requests.length
    const e = await refused(rig.client.responses.create({ model: 'claude-sonnet-4-5', instructions: 'be brief', input: [{ role: 'developer', content: 'be kind' }, { role: 'user', content: [{ type: 'input_text', text: 'Read it' }, { type: 'input_file', filename: 'a.zip', file_data: `data:application/zip;base64,${b64('PK')}` }] }] }))
    expect(e.status).toBe(400)
    expect(e.message).toContain('input[1].content[1].file_data: a "application/zip" document cannot go to a Claude model')
    expect(rig.up.requests.length).toBe(before)
  })

  test('a PNG declared as image/jpeg goes as image/png (the body as it came, on the pass-through path)', async () => {
    rig.up.script({ json: fixture('openai/responses/nonstream-text.json') })
    await rig.client.responses.create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is it?' }, { type: 'input_image', detail: 'auto', image_url: `data:image/jpeg;base64,${b64(PNG)}` }] }] })
    expect(rig.up.requests.at(-1)!.json().input[0].content[1].image_url).toBe(`data:image/png;base64,${b64(PNG)}`)
  })
})

describe('messages', () => {
  const image = (media_type: string, data: string) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: media_type as 'image/png', data } })
  test('an image block of wrapped base64 goes to a Claude model unwrapped', async () => {
    const flat = b64(Buffer.concat([PNG, Buffer.alloc(200)]))
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, image('image/png', flat.replace(/.{76}/g, '$&\n'))] }] })
    expect(rig.up.requests.at(-1)!.json().messages[0].content[1].source.data).toBe(flat)
  })
  for (const model of ['claude-sonnet-4-5', 'gpt-4o-mini']) {
    for (const [what, type, data, words] of BAD_IMAGES) {
      // the schema has refused an empty one and an SVG all along
      if (what === 'empty' || what === 'an SVG') continue
      test(`${model}: an image block's base64 ${what} is a 400 naming source.data, before any upstream call`, async () => {
        const before = rig.up.requests.length
        const e = await refused(rig.anthropic.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, image(type, data)] }] }))
        expect(e.status).toBe(400)
        expect(e.message).toContain(`messages[0].content[1].source.data: ${words}`)
        expect(e.id).toBeTruthy()
        expect(rig.up.requests.length).toBe(before)
      })
    }
    test(`${model}: a document declared as a PDF that is not one is a 400 naming source.data`, async () => {
      const e = await refused(rig.anthropic.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'Read it' }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64('hello') } }] }] }))
      expect(e.status).toBe(400)
      expect(e.message).toContain('messages[0].content[1].source.data: declared as a PDF, but the content is not one')
    })
  }

  test('a PNG declared as image/jpeg goes as image/png; a real PDF goes as it came', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    await rig.anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, image('image/jpeg', b64(PNG)), { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(PDF) } }] }] })
    const sent = rig.up.requests.at(-1)!.json().messages[0].content
    expect(sent[1].source).toEqual({ type: 'base64', media_type: 'image/png', data: b64(PNG) })
    expect(sent[2].source).toEqual({ type: 'base64', media_type: 'application/pdf', data: b64(PDF) })
  })
})

