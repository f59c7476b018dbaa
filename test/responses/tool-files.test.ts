// File ids in the hosted tools of a Responses request. The upstream never saw the gateway's
// files, and an id it knows is of the operator's account: the image tool's mask naming the
// key's own file goes up as a data URL (another id is refused as an input_image's is), and a
// code interpreter's new container may not ask for the key's gateway files to be copied in
// (any other id goes up as given: the operator's resources are the account's to share).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { fixture } from '../helpers/fake-upstream.ts'
import { startResponsesRig, type ResponsesRig } from './e2e-helpers.ts'

let rig: ResponsesRig
let other: OpenAI
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
let pngId: string
let textId: string

beforeAll(async () => {
  rig = await startResponsesRig()
  pngId = (await rig.client.files.create({ file: await toFile(PNG, 'mask.png', { type: 'image/png' }), purpose: 'user_data' })).id
  textId = (await rig.client.files.create({ file: await toFile(Buffer.from('not a picture'), 'notes.txt', { type: 'text/plain' }), purpose: 'user_data' })).id
  const { key } = await rig.gw.services.keys.create({ name: 'other-tool-files' })
  other = new OpenAI({ apiKey: key, baseURL: `${rig.gw.url}/api/alpha/v1`, maxRetries: 0 })
})
afterAll(async () => {
  await rig.stop()
})

const F = (name: string) => `openai/responses/${name}`
const imageTool = (file_id: string) => ({ type: 'image_generation' as const, input_image_mask: { file_id } })
const codeTool = (file_ids: string[]) => ({ type: 'code_interpreter' as const, container: { type: 'auto' as const, file_ids } })
/** The SDK's error for a refused request, and whether the upstream was asked. */
async function refused(client: OpenAI, body: Record<string, unknown>) {
  const before = rig.up.requests.length
  const err = await client.responses.create(body as any).catch((e) => e)
  return { status: err.status, error: typeof err.error === 'string' ? err.error : err.error?.message, asked: rig.up.requests.length > before }
}

describe("the image generation tool's input_image_mask", () => {
  test("a GPT model: the key's own image file goes up as image_url, a base64 data URL, never its id", async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const r = await rig.client.responses.create({ model: 'gpt-4.1', input: 'paint the masked part blue', tools: [imageTool(pngId)] })
    expect(r.status).toBe('completed')
    const sent = rig.up.requests.at(-1)!
    expect(sent.body).not.toContain(pngId)
    expect(sent.json().tools).toEqual([{ type: 'image_generation', input_image_mask: { image_url: `data:image/png;base64,${PNG.toString('base64')}` } }])
  })

  test('in an additional_tools item too, named by where it is', async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const input = [{ role: 'user', content: 'paint' }, { type: 'additional_tools', tools: [imageTool(pngId)] }]
    const ok = await rig.postResponses({ model: 'gpt-4.1', input })
    expect(ok.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().input[1].tools[0].input_image_mask).toEqual({ image_url: `data:image/png;base64,${PNG.toString('base64')}` })
    const before = rig.up.requests.length
    const bad = await rig.postResponses({ model: 'gpt-4.1', input: [input[0], { type: 'additional_tools', tools: [imageTool('file-OPERATORS-OWN')] }] })
    expect([bad.status, (await bad.json()).error]).toEqual([400, 'input[1].tools[0].input_image_mask.file_id: no such file file-OPERATORS-OWN'])
    expect(rig.up.requests.length).toBe(before)
  })

  test("another key's file, or an id the gateway does not hold, is refused as an input_image's is, and nothing goes upstream", async () => {
    for (const [client, id] of [[other, pngId], [rig.client, 'file-OPERATORS-OWN']] as const) {
      const r = await refused(client, { model: 'gpt-4.1', input: 'paint', tools: [{ type: 'function', name: 'f' }, imageTool(id)] })
      expect(r).toEqual({ status: 400, error: `tools[1].input_image_mask.file_id: no such file ${id}`, asked: false })
    }
  })

  test('a file that is not an image is a 400 naming the field', async () => {
    const r = await refused(rig.client, { model: 'gpt-4.1', input: 'paint', tools: [imageTool(textId)] })
    expect(r).toEqual({ status: 400, error: `tools[0].input_image_mask.file_id: file ${textId} is not an image (an image mask is one)`, asked: false })
  })

  test('a Claude model: the image tool is left out and named, as before, whatever its mask names', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-text.json') })
    const res = await rig.postResponses({ model: 'claude-sonnet-4-5', input: 'paint', tools: [imageTool('file-OPERATORS-OWN')] })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-switchyard-compat')).toContain('tools.image_generation')
    expect(rig.up.requests.at(-1)!.body).not.toContain('file-OPERATORS-OWN')
  })
})

describe("a code interpreter's container file_ids", () => {
  test("the key's own gateway file is a 400 naming it, saying how to give the content; nothing goes upstream", async () => {
    const r = await refused(rig.client, { model: 'gpt-4.1', input: 'plot it', tools: [codeTool(['file-abc123', pngId])] })
    expect(r.status).toBe(400)
    expect(r.error).toStartWith(`tools[0].container.file_ids[1]: file ${pngId} is stored on this gateway`)
    expect(r.error).toContain('input_file')
    expect(r.asked).toBe(false)
  })

  test('in an additional_tools item too', async () => {
    const before = rig.up.requests.length
    const bad = await rig.postResponses({ model: 'gpt-4.1', input: [{ role: 'user', content: 'plot' }, { type: 'additional_tools', tools: [codeTool([textId])] }] })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toStartWith(`input[1].tools[0].container.file_ids[0]: file ${textId} is stored on this gateway`)
    expect(rig.up.requests.length).toBe(before)
  })

  test('each id is looked up, so a request names at most 100: more is a 400, not thousands of lookups', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `file-op${i}`)
    const r = await refused(rig.client, { model: 'gpt-4.1', input: 'plot it', tools: [codeTool(ids)] })
    expect(r).toEqual({ status: 400, error: 'tools[0].container.file_ids: more than 100 container file ids in one request', asked: false })
  })

  test("ids that are not the key's gateway files (the operator's, another key's) go up as given", async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const tools = [codeTool(['file-abc123', 'cfile_xyz'])]
    const r = await other.responses.create({ model: 'gpt-4.1', input: 'plot it', tools: [codeTool(['file-abc123', pngId])] })
    expect(r.status).toBe('completed')
    expect(rig.up.requests.at(-1)!.json().tools).toEqual([codeTool(['file-abc123', pngId])])
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-4.1', input: 'plot it', tools })
    expect(rig.up.requests.at(-1)!.json().tools).toEqual(tools)
  })
})
