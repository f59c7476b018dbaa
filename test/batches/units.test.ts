// The pure parts of the batch engine: the streaming JSONL reader, the pace, the create
// envelope, and the shapes of item results and output lines.
import { describe, expect, test } from 'bun:test'
import { parseAnthropicCreate, parseOpenAICreate } from '../../src/batches/create/envelope.ts'
import { jsonlLines } from '../../src/batches/create/lines.ts'
import { Pace } from '../../src/batches/pace.ts'
import { codeFor, itemBackoffMs, itemErrorOf } from '../../src/batches/run-item.ts'
import { itemResultText, outputLineText, usageText } from '../../src/batches/shapes.ts'
import { messageResultText } from '../../src/batches/anthropic/shapes.ts'
import type { ItemRow } from '../../src/batches/store.ts'
import type { BatchRow } from '../../src/batches/types.ts'
import { HttpError } from '../../src/http/errors.ts'

const enc = (s: string) => new TextEncoder().encode(s)
async function* chunks(...parts: (string | Uint8Array)[]) {
  for (const p of parts) yield typeof p === 'string' ? enc(p) : p
}
const read = async (src: AsyncIterable<Uint8Array>, maxLineBytes = 100, maxTotalBytes = 1_000) => {
  const out: [number, string][] = []
  for await (const l of jsonlLines(src, { maxLineBytes, maxTotalBytes })) out.push([l.n, l.text])
  return out
}
const refusal = (p: Promise<unknown>) => p.then(() => 'no error', (e: HttpError) => `${e.status} ${e.message}`)

describe('jsonlLines', () => {
  test('lines split across chunks, CRLF, a last line without newline, blank lines numbered', async () => {
    expect(await read(chunks('{"a"', ':1}\r\n\n{"b":', '2}\n', '{"c":3}'))).toEqual([[1, '{"a":1}'], [2, ''], [3, '{"b":2}'], [4, '{"c":3}']])
  })

  test('a multi-byte character cut between chunks is decoded whole', async () => {
    const bytes = enc('{"x":"é🚀"}\n')
    expect(await read(chunks(bytes.subarray(0, 8), bytes.subarray(8)))).toEqual([[1, '{"x":"é🚀"}']])
  })

  test('a line over the limit is refused as soon as it is known, without reading on', async () => {
    let pulled = 0
    async function* endless() {
      yield enc('ok\n')
      for (;;) {
        pulled++
        yield enc('x'.repeat(40))
      }
    }
    expect(await refusal(read(endless()))).toBe('400 line 2: longer than 100 bytes, the limit of a JSONL line')
    expect(pulled).toBeLessThan(5)
    // exactly the limit is fine, CR not counted
    expect((await read(chunks('y'.repeat(100) + '\r\n')))[0]![1].length).toBe(100)
    expect(await refusal(read(chunks('y'.repeat(101) + '\n')))).toStartWith('400 line 1: longer than 100')
  })

  test('invalid UTF-8 and too many bytes in all', async () => {
    expect(await refusal(read(chunks('{}\n', new Uint8Array([0xff, 0x0a]))))).toBe('400 line 2: not valid UTF-8')
    expect(await refusal(read(chunks('a\n'.repeat(600)), 100, 1000))).toStartWith('400 the input is larger than 1000 bytes')
  })
})

describe('Pace', () => {
  test('grants a tenth of a second at once, then the rate; 0 is unlimited', () => {
    let now = 0
    const p = new Pace(1000, () => now)
    expect(p.take(500)).toBe(100)
    expect(p.take(1)).toBe(0)
    expect(p.waitMs()).toBe(1)
    now += 20
    expect(p.take(500)).toBe(20)
    now += 10_000
    expect(p.take(500)).toBe(100)
    expect(new Pace(0).take(12345)).toBe(12345)
  })
})

describe('create envelope', () => {
  test('OpenAI defaults and values', () => {
    const p = parseOpenAICreate({ input_file_id: 'file-1', metadata: { a: 'b' }, settings: { concurrency: 3 }, output_expires_after: { anchor: 'created_at', seconds: 7200 } })
    expect(p).toEqual({
      envelope: { endpoint: '/v1/chat/completions', inputFileId: 'file-1', completionWindow: '24h', metadata: '{"a":"b"}', concurrency: 3, outputExpiresAfter: 7200 },
      requests: null,
    })
    expect(() => parseOpenAICreate({ requests: [{}], output_expires_after: { anchor: 'created_at', seconds: 60 } })).toThrow('output_expires_after.seconds')
    expect(() => parseOpenAICreate({ requests: [{}], endpoint: null })).not.toThrow()
  })

  test('Anthropic', () => {
    expect(parseAnthropicCreate({ requests: [{ custom_id: 'a', params: {} }] }).envelope.endpoint).toBe('/v1/messages')
    expect(() => parseAnthropicCreate({})).toThrow('requests: required')
  })
})

describe('item errors and backoff', () => {
  test('codes from statuses; an upstream type wins; Retry-After is honoured up to a minute', () => {
    expect(codeFor(429)).toBe('rate_limited')
    expect(codeFor(503)).toBe('upstream_error')
    expect(itemErrorOf(new HttpError(402, 'no money'))).toMatchObject({ status: 402, code: 'insufficient_credits', message: 'no money' })
    expect(itemErrorOf({ status: 429, message: 'slow down', type: 'rate_limit_error', retryAfter: '3' })).toEqual({ status: 429, message: 'slow down', code: 'rate_limit_error', retryAfter: '3' })
    expect(itemErrorOf('weird')).toMatchObject({ status: 500, message: 'weird' })
    expect(itemBackoffMs(0, '3')).toBe(3000)
    expect(itemBackoffMs(0, '999')).toBe(60_000)
    expect(itemBackoffMs(2, undefined, () => 1)).toBe(2000)
    expect(itemBackoffMs(20, undefined, () => 0)).toBe(15_000)
  })
})

describe('shapes', () => {
  const b = { id: 'batch_abc', family: 'openai' } as BatchRow
  const ok: ItemRow = { idx: 3, customId: 'c"3', status: 'succeeded', response: '{"id":"x"}', error: null, usage: '{"prompt_tokens":1}', requestId: 'batch_req_abc_3' }
  const bad: ItemRow = { idx: 4, customId: null, status: 'failed', response: null, error: '{"message":"nope","code":"invalid_request","status":400}', usage: null, requestId: 'r4' }
  const expired: ItemRow = { ...bad, idx: 5, error: '{"message":"late","code":"batch_expired","status":408}' }
  test('item results are valid JSON with the stored reply inline', () => {
    expect(JSON.parse(itemResultText(ok))).toEqual({ index: 3, status: 'succeeded', result: { id: 'x' }, usage: { prompt_tokens: 1 }, custom_id: 'c"3' })
    expect(JSON.parse(itemResultText(bad))).toEqual({ index: 4, status: 'failed', result: null, error: { message: 'nope', code: 'invalid_request', status: 400 } })
  })
  test("OpenAI's batch output lines", () => {
    expect(JSON.parse(outputLineText(b, ok))).toEqual({ id: 'batch_req_abc_3', custom_id: 'c"3', response: { status_code: 200, request_id: 'batch_req_abc_3', body: { id: 'x' } }, error: null })
    expect(JSON.parse(outputLineText(b, bad)).response).toEqual({ status_code: 400, request_id: 'r4', body: { error: { message: 'nope', type: 'invalid_request', param: null, code: 'invalid_request' } } })
    expect(JSON.parse(outputLineText(b, expired))).toMatchObject({ response: null, error: { code: 'batch_expired', message: 'late' } })
  })
  test("Anthropic's result lines", () => {
    expect(JSON.parse(messageResultText(ok))).toEqual({ custom_id: 'c"3', result: { type: 'succeeded', message: { id: 'x' } } })
    expect(JSON.parse(messageResultText(expired))).toEqual({ custom_id: null, result: { type: 'expired' } })
    expect(JSON.parse(messageResultText(bad)).result.error.error).toEqual({ type: 'invalid_request_error', message: 'nope' })
  })
  test('usage in the record words; nothing used is no usage', () => {
    expect(JSON.parse(usageText({ inputTokens: 5, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 1 })!)).toEqual({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, cache_creation_input_tokens: 1, cache_read_input_tokens: 3 })
    expect(usageText({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 })).toBeNull()
  })
})
