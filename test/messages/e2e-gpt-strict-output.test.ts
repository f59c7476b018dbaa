// Anthropic's structured output (`output_config.format`, as the SDK's messages.parse sends it) for
// a GPT model: OpenAI's json_schema response format, strict. A schema with a property left
// optional, which OpenAI's strict mode refuses, is made to fit (the property required and
// nullable), and the null the model then writes for it is taken out of the text the client gets,
// in a JSON reply and in a stream (where the text is held until whole: the nulls can only be
// found in the whole JSON).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startMessagesRig, type MessagesRig } from './e2e-helpers.ts'

let rig: MessagesRig
beforeAll(async () => {
  rig = await startMessagesRig()
})
afterAll(async () => {
  await rig.stop()
})

const ask = [{ role: 'user' as const, content: 'Where is the Louvre?' }]
const answer = (content: string) => ({
  id: 'chatcmpl-out-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
  usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
  choices: [{ index: 0, logprobs: null, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }],
})
/** A chat stream whose text arrives in `pieces`. */
function textStream(pieces: string[]): string {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-out-2', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`
  return [chunk({ role: 'assistant', content: '' }), ...pieces.map((p) => chunk({ content: p })), chunk({}, 'stop'), 'data: [DONE]\n\n'].join('')
}
const sentFormat = () => rig.up.requests.at(-1)!.json().response_format.json_schema

// the schema as the SDK's helper sends it (every object closed), one property left optional
const place = { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' }, note: { type: ['string', 'null'] } }, required: ['city'] } as const

describe('a structured output with an optional property, for a GPT model', () => {
  test('messages.parse: strict upstream with the property required and nullable, and the parsed output without the null the model wrote for it', async () => {
    const { jsonSchemaOutputFormat } = await import('@anthropic-ai/sdk/helpers/json-schema')
    rig.up.script({ json: answer('{"city":"Paris","zip":null,"note":null}') })
    const m = await rig.anthropic.messages.parse({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: jsonSchemaOutputFormat(place as any) } } as any)
    // zip was optional: left out; note is nullable in the client's schema: its null stays
    expect((m as any).parsed_output).toEqual({ city: 'Paris', note: null })
    const sent = sentFormat()
    expect(sent.strict).toBe(true)
    expect(sent.schema).toEqual({
      type: 'object',
      properties: { city: { type: 'string' }, zip: { type: ['string', 'null'] }, note: { type: ['string', 'null'] } },
      required: ['city', 'zip', 'note'],
      additionalProperties: false,
    })
  })

  test('streamed: the text is held until whole and goes out as one delta without the added null', async () => {
    rig.up.script({ sse: textStream(['{"city":', '"Paris","zip"', ':null,"note":"left bank"}']) })
    const stream = rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: { type: 'json_schema', schema: place } } } as any)
    const deltas: string[] = []
    stream.on('text', (t) => deltas.push(t))
    const final = await stream.finalMessage()
    expect(deltas).toEqual(['{"city":"Paris","note":"left bank"}'])
    expect(final.content).toEqual([{ type: 'text', text: '{"city":"Paris","note":"left bank"}' } as any])
    expect(sentFormat().strict).toBe(true)
  })

  test('streamed, a schema that fits as it is: the text goes out as it comes, piece by piece', async () => {
    const closed = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }
    rig.up.script({ sse: textStream(['{"city":', '"Paris"}']) })
    const stream = rig.anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: { type: 'json_schema', schema: closed } } } as any)
    const deltas: string[] = []
    stream.on('text', (t) => deltas.push(t))
    await stream.finalMessage()
    expect(deltas).toEqual(['{"city":', '"Paris"}'])
    expect(sentFormat()).toEqual({ name: 'output', schema: closed, strict: true })
  })

  test('the numbers of a text a null is taken out of keep the digits the model wrote: an id past 2^53, a price written 1.50', async () => {
    const order = { type: 'object', properties: { id: { type: 'integer' }, price: { type: 'number' }, zip: { type: 'string' } }, required: ['id', 'price'] } as const
    rig.up.script({ json: answer('{"id":12345678901234567890,"price":1.50,"zip":null}') })
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_config: { format: { type: 'json_schema', schema: order } } })
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(body.content[0].text).toBe('{"id":12345678901234567890,"price":1.50}')
  })

  test('the older output_format parameter too: fitted, and the null taken out of the text', async () => {
    rig.up.script({ json: answer('{"city":"Paris","zip":null,"note":null}') })
    const res = await rig.postMessages({ model: 'gpt-4o-mini', max_tokens: 200, messages: ask, output_format: { type: 'json_schema', schema: place } })
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(JSON.parse(body.content[0].text)).toEqual({ city: 'Paris', note: null })
    expect(sentFormat().strict).toBe(true)
  })
})
