// An upstream that quotes a key in one of the forms providers and proxies print it in (masked
// behind asterisks, cut short around an ellipsis, upper case, `sk_live_…`, the gateway's own
// `sk-sy-…`, base64 Basic credentials, right after a `\u0022` escape of the JSON it sends), in an
// HTTP error answer and in an error inside a stream: neither the client nor the record carries
// it on, on any path; the rest of the message does. Names that merely begin `sk-` are kept.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

const OPENAI_KEY = 'sk-proj-Q7xLmN2pRtV9wYzA4bCdEfGh8jKlMnOp3qRsTuVwxyz'
const ANTHROPIC_KEY = 'sk-ant-api03-Zk4mP9qRt2VwXy7AbCdEf0GhIjKlMnOpQrStUvWx-abcdAA'

/** Form → [what the upstream quotes, what must not come back]. */
const FORMS: Record<string, [string, string]> = {
  'asterisks first': ['****wxyz', '*wxyz'],
  'an ellipsis, then asterisks': ['sk-proj-...****wxyz', '*wxyz'],
  'an ellipsis alone': ['sk-abc1...wxyz', '.wxyz'],
  'upper case': ['SK-PROJ-Q7XLMN2PRTV9WYZA4BCDEFGH8', 'Q7XLMN2PRTV9'],
  'sk_live_': ['sk_live_51HxYzAbCdEf0123456789GhIjKl', '51HxYzAbCdEf'],
  'sk_test_': ['sk_test_4eC39HqLyjWDarjtT1zdp7dc', '4eC39HqLyjWD'],
  "the gateway's, with no digit": ['sk-sy-AbCdEfGhIjKlMnOpQrStUvWxYz_-AbCdEfGhIjKlMnOpQ', 'AbCdEfGhIjKlMnOp'],
  'base64 Basic credentials': [Buffer.from(`user:${OPENAI_KEY}`).toString('base64'), Buffer.from(`user:${OPENAI_KEY}`).toString('base64').slice(12, 40)],
  // glued to a name by an underscore (`OPENAI_API_KEY_sk-…`), cut short: an `sk-` is a key's wherever a word ends
  'after an underscore, cut short': [`x_${OPENAI_KEY.slice(0, 24)}...`, OPENAI_KEY.slice(8, 24)],
  'after a \\u0022 escape': ['"sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0"', 'Zz9Yy8Xx7Ww6'],
}
const NAMES = 'models sk-learn-regressor and sk-search-tool; a risk-free task-list; disk-usage'

let up: FakeUpstream
let gw: Gateway

/** The message the request's prompt names, in JSON whose quotes are escaped as `\u0022` (as some encoders write them). */
function message(req: RecordedRequest): string {
  const form = /form:(\w+)/.exec(req.body)?.[1] ?? ''
  const said = form === 'names' ? NAMES : `Incorrect API key provided: ${Object.values(FORMS)[Number(form)]![0]}. You can find your API key at https://platform.openai.com/account/api-keys.`
  return JSON.stringify(said).replaceAll('\\"', '\\u0022')
}

/** A 400 naming the key, or a stream that begins, then fails naming it. */
function quoting(req: RecordedRequest) {
  const m = message(req)
  const stream = req.body.includes('"stream":true')
  if (req.path.endsWith('/messages')) {
    if (!stream) return { status: 400, json: `{"type":"error","error":{"type":"invalid_request_error","message":${m}}}` }
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
    return { sse: `${start}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":${m}}}\n\n` }
  }
  if (!stream) return { status: 400, json: `{"error":{"message":${m},"type":"invalid_request_error","code":"invalid_api_key"}}` }
  const first = 'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n'
  return { sse: `${first}data: {"error":{"message":${m},"type":"server_error"}}\n\n` }
}

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(quoting)
  gw = await startGateway({ env: { ...NO_LIMITS, OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: up.url } })
})
afterAll(async () => {
  await gw.stop()
  await up.stop()
})

const PATHS: [string, string, string][] = [
  ['chat → GPT (pass-through)', '/api/alpha/v1/chat/completions', 'gpt-4o'],
  ['messages → GPT (translated)', '/api/beta/v1/messages', 'gpt-4o'],
  ['messages → Claude (pass-through)', '/api/beta/v1/messages', 'claude-sonnet-4-5'],
  ['chat → Claude (translated)', '/api/alpha/v1/chat/completions', 'claude-sonnet-4-5'],
]

/** The client's answer (its text, the JSON escapes of a relayed event undone) and the record's error. */
async function ask(path: string, model: string, form: string, stream: boolean): Promise<{ client: string; record: string }> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 50, stream, messages: [{ role: 'user', content: `form:${form}` }] }),
  })
  const raw = await res.text()
  const client = raw + raw.replace(/\\u([0-9a-f]{4})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
  await gw.services.recorder.flush()
  const list = (await (await fetch(`${gw.url}/api/v1/generations?limit=1`, { headers: { authorization: `Bearer ${gw.key}` } })).json()) as { data: { error: string | null }[] }
  return { client, record: String(list.data[0]?.error) }
}

for (const [name, path, model] of PATHS) {
  test(`${name}: a key in any of its printed forms reaches neither the client nor the record, in an HTTP error or a stream`, async () => {
    const leaks: string[] = []
    for (const [i, [form, [, secret]]] of Object.entries(FORMS).entries()) {
      for (const stream of [false, true]) {
        const { client, record } = await ask(path, model, String(i), stream)
        const where = `${form}${stream ? ' (stream)' : ''}`
        if (client.includes(secret)) leaks.push(`${where}: client`)
        if (record.includes(secret)) leaks.push(`${where}: record`)
        // the rest of the message still says what was wrong
        expect(record).toContain('Incorrect API key provided: ')
      }
    }
    expect(leaks).toEqual([])
  })

  test(`${name}: names that begin with sk- are relayed as they came`, async () => {
    for (const stream of [false, true]) {
      const { client, record } = await ask(path, model, 'names', stream)
      expect(client).toContain(NAMES)
      expect(record).toContain(NAMES)
    }
  })
}
