// A hostile client against the batch routes: every bad input is a 400 (or a 404 for what is
// not the caller's) as JSON {error} with an x-request-id, never a 500; a bad JSONL line is
// named by its number; a refused batch leaves nothing behind.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chat, msg, startBatchRig, type BatchRig } from './helpers.ts'

let rig: BatchRig
beforeAll(async () => {
  rig = await startBatchRig({ upstream: false, env: { SWITCHYARD_BATCH_MAX_ITEMS: '5' } })
})
afterAll(() => rig.stop())


/** The status and error message of a response, checking the error's form. */
async function refusal(res: Response): Promise<{ status: number; error: string }> {
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(res.headers.get('content-type')).toContain('application/json')
  const body = (await res.json()) as { error: string }
  expect(typeof body.error).toBe('string')
  return { status: res.status, error: body.error }
}

async function createFromLines(lines: (string | object)[], extra: Record<string, unknown> = {}) {
  const file = await rig.upload(lines)
  return refusal(await rig.call('POST', '/api/v1/batches', { input_file_id: file, ...extra }))
}

const leftovers = () => rig.gw.services.storage.sql.get('SELECT (SELECT count(*) FROM batch_items WHERE batch_id NOT IN (SELECT id FROM batches)) AS items, (SELECT count(*) FROM batch_ingests) AS ingests')

const good = chat('mock-gpt', 'ok')

describe('JSONL lines: the first bad one is named by its number', () => {
  const cases: [string, (string | object)[], RegExp][] = [
    ['malformed JSON', [good, good, '{"model": "mock-gpt", "messages": [', good], /^line 3: Malformed JSON/],
    ['a blank line still counts', [good, '', '   ', 'nope'], /^line 4: Malformed JSON/],
    ['a missing field of the surface', [good, { model: 'mock-gpt' }], /^line 2: messages: required/],
    ['an unknown parameter', [{ ...good, temprature: 1 }], /^line 1: .*temprature/],
    ['a value out of range', [good, good, { ...good, temperature: 7 }], /^line 3: temperature/],
    ['an unknown model', [chat('no-such-model', 'x')], /^line 1: model: unknown model "no-such-model"/],
    ['a parameter of the other family (reject mode)', [chat('mock-claude', 'x', { logit_bias: { '1': 2 } })], /^line 1: .*logit_bias/],
    ['a __proto__ key', [good, '{"model":"mock-gpt","messages":[{"role":"user","content":"x"}],"__proto__":{"polluted":1}}'], /^line 2: __proto__: the key "__proto__" is not allowed/],
    ['an escaped __proto__ key', ['{"model":"mock-gpt","messages":[{"role":"user","content":"x","\\u005f_proto__":{"a":1}}]}'], /^line 1: messages\[0\]\.__proto__: the key/],
    ['a constructor key deep down', [{ ...good, metadata: { constructor: { prototype: 1 } } }], /^line 1: metadata\.constructor/],
    ['not an object', [good, '[1,2]'], /^line 2: expected a JSON object/],
    ['a batch line for another endpoint', [{ custom_id: 'a', method: 'POST', url: '/v1/messages', body: good }], /^line 1: url: "\/v1\/messages" is not the batch's endpoint/],
    ['a batch line with GET', [{ custom_id: 'a', method: 'GET', url: '/v1/chat/completions', body: good }], /^line 1: method: must be "POST"/],
    ['a batch line with an extra field', [{ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: good, header: 1 }], /^line 1: header: unknown field/],
    ['a custom_id that is not a string', [{ ...good, custom_id: 7 }], /^line 1: custom_id: expected a non-empty string/],
    ['a custom_id used twice', [{ ...good, custom_id: 'a' }, good, { ...good, custom_id: 'a' }], /^line 3: custom_id "a" is already used by line 1/],
    ['more items than a batch holds (max_items 5)', [good, good, good, '', good, good, good], /^line 7: a batch holds at most 5 items/],
    ['no request at all', ['', '  '], /holds no requests/],
  ]
  for (const [name, lines, want] of cases) {
    test(name, async () => {
      const r = await createFromLines(lines)
      expect(r.status).toBe(400)
      expect(r.error).toMatch(want)
    })
  }

  test('a line over 256 KB is refused by number, before the rest of it is read', async () => {
    const big = JSON.stringify(chat('mock-gpt', 'x'.repeat(300 * 1024)))
    const r = await createFromLines([good, big, good])
    expect(r).toEqual({ status: 400, error: 'line 2: longer than 262144 bytes, the limit of a JSONL line' })
  })

  test('invalid UTF-8 and CRLF line ends', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode(JSON.stringify(good) + '\r\n'), 0x7b, 0xff, 0xfe, 0x7d, 0x0a])
    const up = await rig.openai().files.create({ file: new File([bytes], 'bad.jsonl'), purpose: 'batch' })
    const r = await refusal(await rig.call('POST', '/api/v1/batches', { input_file_id: up.id }))
    expect(r).toEqual({ status: 400, error: 'line 2: not valid UTF-8' })
    // CRLF alone is fine
    const ok = await rig.upload([JSON.stringify(good) + '\r', JSON.stringify(good) + '\r'])
    expect((await rig.call('POST', '/api/v1/batches', { input_file_id: ok })).status).toBe(200)
  })

  test('a refused batch leaves no items, no marker and no batch', async () => {
    await createFromLines([good, good, good, good, 'broken'])
    expect(await leftovers()).toEqual({ items: 0, ingests: 0 })
    expect((await rig.openai().batches.list()).data.every((b) => b.status !== 'failed')).toBe(true)
  })
})

describe('the create body', () => {
  const post = async (body: unknown, path = '/api/v1/batches') => refusal(await rig.call('POST', path, body))
  test('exactly one of input_file_id and requests', async () => {
    expect((await post({ input_file_id: 'file-x', requests: [good] })).error).toStartWith('input_file_id, requests: give exactly one')
    expect((await post({ endpoint: '/v1/chat/completions' })).error).toStartWith('input_file_id, requests: give exactly one')
    expect((await post({ input_file_id: 42 })).error).toStartWith('input_file_id: expected a file id')
    expect((await post({ requests: [] })).error).toBe('requests: must hold at least one request')
    expect((await post({ requests: {} })).error).toStartWith('requests: expected an array')
  })

  test('fields, endpoint, window, settings, metadata', async () => {
    expect((await post({ requests: [good], foo: 1, bar: 2 })).error).toStartWith('foo, bar: unknown parameters for creating a batch')
    expect((await post({ requests: [good], endpoint: '/v1/embeddings' })).error).toStartWith('endpoint: must be one of "/v1/chat/completions"')
    expect((await post({ requests: [good], completion_window: '48h' })).error).toBe('completion_window: only "24h" is supported')
    expect((await post({ requests: [good], settings: { concurrency: 0 } })).error).toStartWith('settings.concurrency:')
    expect((await post({ requests: [good], settings: { concurrency: '4' } })).error).toStartWith('settings.concurrency:')
    expect((await post({ requests: [good], settings: { speed: 'max' } })).error).toStartWith('speed: unknown parameter')
    expect((await post({ requests: [good], metadata: ['a'] })).error).toStartWith('metadata: expected an object')
    expect((await post({ requests: [good], metadata: { big: 'x'.repeat(20_000) } })).error).toStartWith('metadata: larger than')
  })

  test('inline items are named by their index; more than max_items is refused whole', async () => {
    expect((await post({ requests: [good, good, { model: 'mock-gpt' }] })).error).toBe('requests[2]: messages: required')
    expect((await post({ requests: Array(6).fill(good) })).error).toBe('requests: 6 items; a batch holds at most 5')
    expect((await post({ requests: [good, null] })).error).toStartWith('requests[1]: expected a JSON object')
    // a messages item in a chat batch is checked as chat
    expect((await post({ requests: [msg('mock-gpt', 'x', { top_k: 3 })] })).error).toMatch(/^requests\[0\]: .*top_k/)
  })

  test('malformed, empty, non-object and prototype-polluting bodies', async () => {
    const malformed = await post('{"requests": [')
    expect(malformed.status).toBe(400)
    expect(malformed.error).toStartWith('Malformed JSON body')
    expect(await post('')).toEqual({ status: 400, error: 'Request body is empty: expected a JSON object' })
    expect((await post('[1]')).error).toStartWith('Request body: expected a JSON object')
    expect((await post('{"requests":[{"model":"mock-gpt","messages":[{"role":"user","content":"x"}]}],"__proto__":{"x":1}}')).error).toStartWith('__proto__: the key')
  })

  test('input_file_id of another key, or of no file', async () => {
    const theirs = await rig.upload([good], rig.otherKey)
    expect(await post({ input_file_id: theirs })).toEqual({ status: 400, error: `input_file_id: no file ${theirs}` })
    expect((await post({ input_file_id: 'file-' + 'z'.repeat(10_000) })).error.length).toBeLessThan(200)
  })

  test('an endpoint that is not a batch endpoint is a 400 naming it', async () => {
    expect((await post({ requests: [{ model: 'mock-gpt', input: 'x' }], endpoint: '/v1/embeddings' })).status).toBe(400)
  })

  test('an Anthropic create body takes {requests: [{custom_id, params}]} only', async () => {
    const path = '/api/beta/v1/messages/batches'
    expect((await post({ requests: [{ custom_id: 'a', params: msg('mock-claude', 'x') }], endpoint: '/v1/chat/completions' }, path)).error).toStartWith('endpoint: unknown parameter')
    expect((await post({ requests: [{ params: msg('mock-claude', 'x') }] }, path)).error).toStartWith('requests[0]: custom_id: expected a non-empty string')
    expect((await post({ requests: [{ custom_id: 'a b', params: msg('mock-claude', 'x') }] }, path)).error).toBe('requests[0]: custom_id: 1 to 64 letters, digits, _ or -')
    expect((await post({ requests: [{ custom_id: 'a', params: msg('mock-claude', 'x'), extra: 1 }] }, path)).error).toStartWith('requests[0]: extra: unknown field')
    expect((await post({ requests: [{ custom_id: 'a', params: { model: 'mock-claude', messages: [{ role: 'user', content: 'x' }] } }] }, path)).error).toBe('requests[0]: max_tokens: required')
    expect((await post({ requests: [{ custom_id: 'a', params: msg('mock-claude', 'x') }, { custom_id: 'a', params: msg('mock-claude', 'y') }] }, path)).error).toBe('requests[1]: custom_id "a" is already used by requests[0]')
  })
})

describe('routes', () => {
  let mine: string
  beforeAll(async () => {
    const res = await rig.call('POST', '/api/v1/batches', { requests: [good] })
    mine = ((await res.json()) as any).id
    await rig.ended(mine)
  })

  test("another key's batch is a 404 on every route; so is an unknown or huge id", async () => {
    for (const [method, path] of [
      ['GET', `/api/v1/batches/${mine}`],
      ['GET', `/api/alpha/v1/batches/${mine}`],
      ['POST', `/api/v1/batches/${mine}/cancel`],
      ['GET', `/api/v1/batches/${mine}/results`],
      ['GET', `/api/v1/batches/${mine}/export?format=zip`],
    ] as const) {
      const r = await refusal(await rig.call(method, path, undefined, rig.otherKey))
      expect(r).toEqual({ status: 404, error: `No such batch: ${mine}` })
    }
    expect((await refusal(await rig.call('GET', '/api/v1/batches/batch_nope'))).status).toBe(404)
    const huge = await refusal(await rig.call('GET', '/api/v1/batches/' + 'b'.repeat(10_000)))
    expect(huge.status).toBe(404)
    expect(huge.error.length).toBeLessThan(120)
    expect((await refusal(await rig.call('GET', '/api/v1/batches/%E0%A4%A'))).status).toBe(404)
    // an OpenAI-shaped batch is not a message batch
    expect((await refusal(await rig.call('GET', `/api/beta/v1/messages/batches/${mine}`))).status).toBe(404)
  })

  test('cancelling a finished batch is a 400', async () => {
    expect(await refusal(await rig.call('POST', `/api/v1/batches/${mine}/cancel`))).toEqual({ status: 400, error: `Batch ${mine} is completed; only a queued or processing batch can be cancelled` })
  })

  test('paging parameters', async () => {
    for (const [path, name] of [
      ['/api/v1/batches?limit=0', 'limit'],
      ['/api/v1/batches?limit=101', 'limit'],
      ['/api/v1/batches?limit=ten', 'limit'],
      ['/api/v1/batches?after=', 'after'],
      ['/api/v1/batches?after=batch_nope', 'after'],
      [`/api/v1/batches/${mine}/results?limit=1001`, 'limit'],
      [`/api/v1/batches/${mine}/results?offset=abc`, 'offset'],
      [`/api/v1/batches/${mine}/results?offset=99999999999999999999`, 'offset'],
      ['/api/beta/v1/messages/batches?limit=1001', 'limit'],
      ['/api/beta/v1/messages/batches?after_id=a&before_id=b', 'after_id, before_id'],
    ] as const) {
      const r = await refusal(await rig.call('GET', path))
      expect(r.status).toBe(400)
      expect(r.error).toStartWith(`${name}:`)
    }
  })

  test('wrong methods are 405s, and no route answers 500', async () => {
    expect((await refusal(await rig.call('DELETE', `/api/v1/batches/${mine}`))).status).toBe(405)
    expect((await refusal(await rig.call('PUT', '/api/v1/batches'))).status).toBe(405)
  })
})
