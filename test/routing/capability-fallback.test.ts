// A fallback that cannot take what the request sends (images in its prompt, tools to call) is
// left out when the model the client named fails: sent there, the request would only meet that
// model's 400, and the client would get it in place of the failure that sent it on. The built-in
// catalog knows a few such models (gpt-3.5-turbo, o1-mini and o3-mini take no images; o1-mini no
// tools); a configured model says so with `images: false` or `tools: false`. A request that does
// not need what the fallback lacks still goes there. Through the official SDKs, on each surface.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { fixture, startFakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const CHAT = fixture('openai/chat/nonstream-text.json')
const RESPONSES = fixture('openai/responses/nonstream-text.json')
const CLAUDE = fixture('anthropic/messages/nonstream-text.json')
const DOWN = { status: 503, json: { error: { message: 'overloaded', type: 'server_error' } } }
const CLAUDE_DOWN = { status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }
// what OpenAI answers a model without vision that is sent an image
const NO_IMAGES = { status: 400, json: { error: { message: 'Invalid content type. image_url is only supported by certain models.', type: 'invalid_request_error', param: 'messages.[0].content.[1].type', code: null } } }
const NO_TOOLS = { status: 400, json: { error: { message: "tools is not supported with this model.", type: 'invalid_request_error', param: 'tools', code: 'unsupported_parameter' } } }
const NO_CUSTOM = { status: 400, json: { error: { message: "Tool type 'custom' is not supported with this model.", type: 'invalid_request_error', param: 'tools', code: null } } }
const NO_SCHEMA = { status: 400, json: { error: { message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", type: 'invalid_request_error', param: 'response_format', code: null } } }
const CLAUDE_NO_IMAGES = { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'This model does not support image input.' } } }
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

const [openaiUp, claudeUp] = await Promise.all([startFakeUpstream(), startFakeUpstream()])
const gw: Gateway = await startGateway({
  yaml: `
providers:
  - { id: openai-a, kind: openai, base_url: ${openaiUp.url}/v1, api_key: sk-a, max_retries: 0 }
  - { id: claude-a, kind: anthropic, base_url: ${claudeUp.url}, api_key: sk-c, max_retries: 0 }
models:
  - { id: gpt-4o, family: openai, fallbacks: [gpt-3.5-turbo, gpt-4.1] }
  - { id: gpt-4o-mini, family: openai, fallbacks: [o1-mini, gpt-4.1] }
  - { id: gpt-4.1-mini, family: openai, fallbacks: [gpt-3.5-turbo] }
  - { id: gpt-4.1-nano, family: openai, fallbacks: [local-text, gpt-4.1] }
  - { id: local-text, family: openai, upstream_id: llama-3-8b, tools: false }
  - { id: claude-opus-4-5, family: anthropic, fallbacks: [claude-text, claude-haiku-4-5] }
  - { id: claude-text, family: anthropic, upstream_id: claude-3-5-haiku-20241022, images: false }
  - { id: gpt-5-codex, family: openai, fallbacks: [gpt-4.1, gpt-5] }
  - { id: gpt-5.1, family: openai, fallbacks: [gpt-5, gpt-5.2] }
routing: { cooldown_s: 0, failures_to_cool: 1000 }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
`,
})
afterAll(async () => {
  await gw.stop()
  await Promise.all([openaiUp, claudeUp].map((u) => u.stop()))
})
afterEach(() => {
  for (const u of [openaiUp, claudeUp]) u.requests.length = 0
})

const openai = () => new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0 })
const anthropic = () => new Anthropic({ baseURL: `${gw.url}/api/beta`, apiKey: gw.key, maxRetries: 0 })
const models = (r: RecordedRequest[]) => r.map((x) => x.json().model)

/** The named model is down; the fallbacks refuse what they lack, as their upstreams would, and answer the rest. */
function openaiScript(ok: object) {
  openaiUp.script((r) => {
    const body = r.json()
    if (['gpt-4o', 'gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-5-codex', 'gpt-5.1'].includes(body.model)) return DOWN
    const types = (body.tools ?? []).map((t: { type: string }) => t.type)
    if (!/^gpt-5/.test(body.model) && types.includes('custom')) return NO_CUSTOM
    if (!/^gpt-5\.\d/.test(body.model) && types.includes('apply_patch')) return NO_CUSTOM
    const text = JSON.stringify(body.messages ?? body.input ?? '')
    if (['gpt-3.5-turbo', 'o1-mini'].includes(body.model) && /image_url|input_image|input_file/.test(text)) return NO_IMAGES
    if (['o1-mini', 'llama-3-8b'].includes(body.model) && body.tools) return NO_TOOLS
    if (['gpt-3.5-turbo', 'o1-mini'].includes(body.model) && (body.response_format?.type ?? body.text?.format?.type) === 'json_schema') return NO_SCHEMA
    return ok
  })
}

const imageAsk = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'what is this?' }, { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${PIXEL}` } }] }]
const weather = [{ type: 'function' as const, function: { name: 'weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]

describe('a fallback that lacks what the request sends', () => {
  test('chat with an image: gpt-3.5-turbo is passed over for the next fallback', async () => {
    openaiScript({ json: CHAT })
    const res = await openai().chat.completions.create({ model: 'gpt-4o', messages: imageAsk })
    expect(res.choices[0]!.message.content!.length).toBeGreaterThan(0)
    expect(models(openaiUp.requests)).toEqual(['gpt-4o', 'gpt-4.1'])
  })

  test('chat without one: gpt-3.5-turbo still takes it', async () => {
    openaiScript({ json: CHAT })
    await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
    expect(models(openaiUp.requests)).toEqual(['gpt-4o', 'gpt-3.5-turbo'])
  })

  test('with no fallback left that takes it, the client gets the named model’s failure, not a fallback’s 400', async () => {
    openaiScript({ json: CHAT })
    const err = await openai().chat.completions.create({ model: 'gpt-4.1-mini', messages: imageAsk }).catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.APIError)
    expect(err.status).toBe(503)
    expect(models(openaiUp.requests)).toEqual(['gpt-4.1-mini'])
  })

  test('chat with a JSON schema for the reply: gpt-3.5-turbo is passed over; JSON mode still goes there', async () => {
    openaiScript({ json: CHAT })
    const schema = { type: 'json_schema' as const, json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } } }
    await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'json please' }], response_format: schema })
    expect(models(openaiUp.requests)).toEqual(['gpt-4o', 'gpt-4.1'])
    openaiUp.requests.length = 0
    await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } })
    expect(models(openaiUp.requests)).toEqual(['gpt-4o', 'gpt-3.5-turbo'])
  })

  test('chat with tools: o1-mini is passed over; a configured model of `tools: false` too', async () => {
    openaiScript({ json: CHAT })
    await openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'weather?' }], tools: weather })
    expect(models(openaiUp.requests)).toEqual(['gpt-4o-mini', 'gpt-4.1'])
    openaiUp.requests.length = 0
    await openai().chat.completions.create({ model: 'gpt-4.1-nano', messages: [{ role: 'user', content: 'weather?' }], tools: weather })
    expect(models(openaiUp.requests)).toEqual(['gpt-4.1-nano', 'gpt-4.1'])
    openaiUp.requests.length = 0
    // without tools the configured model serves
    await openai().chat.completions.create({ model: 'gpt-4.1-nano', messages: [{ role: 'user', content: 'hi' }] })
    expect(models(openaiUp.requests)).toEqual(['gpt-4.1-nano', 'llama-3-8b'])
  })

  test('Responses with an input image: gpt-3.5-turbo is passed over', async () => {
    openaiScript({ json: RESPONSES })
    const res = await openai().responses.create({
      model: 'gpt-4o',
      store: false,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is this?' }, { type: 'input_image', image_url: `data:image/png;base64,${PIXEL}`, detail: 'auto' }] }],
    })
    expect(res.output_text.length).toBeGreaterThan(0)
    expect(models(openaiUp.requests)).toEqual(['gpt-4o', 'gpt-4.1'])
  })

  test('Responses: an image in the stored thread a turn continues counts as one in its input', async () => {
    openaiScript({ json: RESPONSES })
    const first = await openai().responses.create({
      model: 'gpt-4.1',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is this?' }, { type: 'input_image', image_url: `data:image/png;base64,${PIXEL}`, detail: 'auto' }] }],
    })
    openaiUp.requests.length = 0
    await openai().responses.create({ model: 'gpt-4o', previous_response_id: first.id, input: 'and its colour?' })
    expect(models(openaiUp.requests)).toEqual(['gpt-4o', 'gpt-4.1'])
  })

  test('Responses with a PDF: gpt-3.5-turbo is passed over', async () => {
    openaiScript({ json: RESPONSES })
    await openai().responses.create({
      model: 'gpt-4o',
      store: false,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'sum it up' }, { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' }] }],
    })
    expect(models(openaiUp.requests)).toEqual(['gpt-4o', 'gpt-4.1'])
  })

  test('Messages with an image in a tool result: a configured Claude model of `images: false` is passed over', async () => {
    claudeUp.script((r) => {
      const body = r.json()
      if (body.model === 'claude-opus-4-5') return CLAUDE_DOWN
      if (body.model === 'claude-3-5-haiku-20241022' && JSON.stringify(body.messages).includes('"image"')) return CLAUDE_NO_IMAGES
      return { json: CLAUDE }
    })
    const res = await anthropic().messages.create({
      model: 'claude-opus-4-5',
      max_tokens: 100,
      tools: [{ name: 'screenshot', description: 'a screenshot', input_schema: { type: 'object', properties: {} } }],
      messages: [
        { role: 'user', content: 'look at the screen' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } }] }] },
      ],
    })
    expect(res.content.length).toBeGreaterThan(0)
    expect(models(claudeUp.requests)).toEqual(['claude-opus-4-5', 'claude-haiku-4-5'])
  })

  test('GPT-5’s own tools: Codex’s custom apply_patch passes gpt-4.1 over; the apply_patch tool passes gpt-5 over', async () => {
    openaiScript({ json: RESPONSES })
    const freeform = { type: 'custom' as const, name: 'apply_patch', description: 'edit files', format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: /.+/' } }
    await openai().responses.create({ model: 'gpt-5-codex', store: false, input: 'fix it', tools: [freeform] })
    expect(models(openaiUp.requests)).toEqual(['gpt-5-codex', 'gpt-5'])
    openaiUp.requests.length = 0
    await openai().responses.create({ model: 'gpt-5.1', store: false, input: 'fix it', tools: [{ type: 'apply_patch' }] })
    expect(models(openaiUp.requests)).toEqual(['gpt-5.1', 'gpt-5.2'])
    openaiUp.requests.length = 0
    // function tools alone: gpt-4.1 takes them
    await openai().responses.create({ model: 'gpt-5-codex', store: false, input: 'fix it', tools: [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: {} }, strict: false }] })
    expect(models(openaiUp.requests)).toEqual(['gpt-5-codex', 'gpt-4.1'])
  })
})
