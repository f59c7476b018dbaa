// A funded key's reservation must hold what the upstream can bill, also where that is more than
// the body shows: a document named by URL (fetched and put in the prompt after admission), chat's
// `n` (each choice up to the cap), OpenAI's priority tier (a premium over the standard price),
// and a Claude model asked to think (its max_tokens raised to hold the budget). And a client that
// leaves while the upstream has its prompt pays for that prompt, as it would on a stream. The fake
// upstream bills as the real ones do: the o200k tokens of what it was sent, n choices of the cap
// each, the whole max_tokens it was sent, at the tier it served.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { encode } from 'gpt-tokenizer'
import { NO_LIMITS } from '../batches/helpers.ts'
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { expectBatchBounded, expectBurstBounded as burst } from '../helpers/burst.ts'

// about 100,000 tokens of text, served at a local address the gateway may fetch
const DOCUMENT = Array.from({ length: 50_000 }, (_, i) => `word${i % 97}`).join(' ')
/** A prompt with this in it is answered after 3 s. */
const SLOW = 'answer-me-slowly'

let g: Gateway
let up: FakeUpstream
let docs: ReturnType<typeof Bun.serve>

function reply(req: RecordedRequest) {
  const body = req.json() as Record<string, unknown>
  const input = encode(req.body).length
  const waitMs = req.body.includes(SLOW) ? 3_000 : 150
  if (req.path.endsWith('/messages')) {
    const output = body.max_tokens as number
    return { waitMs, json: { id: `msg_${crypto.randomUUID()}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: input, output_tokens: output } } }
  }
  const n = (body.n as number | undefined) ?? 1
  const output = n * ((body.max_completion_tokens ?? body.max_tokens) as number)
  const choices = Array.from({ length: n }, (_, index) => ({ index, message: { role: 'assistant', content: 'ok' }, finish_reason: 'length' }))
  // served at priority when asked for it, as OpenAI's reply says
  const tier = body.service_tier === 'priority' ? 'priority' : 'default'
  return { waitMs, json: { id: `chatcmpl-${crypto.randomUUID()}`, object: 'chat.completion', created: 1, model: 'gpt-4o', choices, service_tier: tier, usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } } }
}

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(reply)
  docs = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(DOCUMENT, { headers: { 'content-type': 'text/plain' } }) })
  g = await startGateway({
    env: { ...NO_LIMITS, SWITCHYARD_MEDIA_ALLOW_PRIVATE_URLS: 'true', OPENAI_API_KEY: 'sk-up-openai', OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: 'sk-up-anthropic', ANTHROPIC_BASE_URL: up.url },
  })
})
afterAll(async () => {
  await g.stop()
  await up.stop()
  docs.stop(true)
})

const post = (key: string, path: string, body: unknown, signal?: AbortSignal) =>
  fetch(g.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal })

interface Generation {
  cost: number
  usage: { prompt_tokens: number; completion_tokens: number }
  error: string | null
}

async function generation(key: string, id: string): Promise<Generation> {
  await g.services.recorder.flush()
  const r = await fetch(`${g.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } })
  expect(r.status).toBe(200)
  return ((await r.json()) as { generation: Generation }).generation
}

async function unitCost(path: string, body: unknown): Promise<number> {
  const r = await post(g.key, path, body)
  if (r.status !== 200) throw new Error(await r.text())
  const cost = (await generation(g.key, ((await r.json()) as { id: string }).id)).cost
  expect(cost).toBeGreaterThan(0)
  return cost
}

/** 100 requests at once on a key funded for 5.5 of them: at most 7 are served (one past the credit), the rest 402. */
async function expectBurstBounded(path: string, body: unknown) {
  const unit = await unitCost(path, body)
  const { key } = await g.services.keys.create({ name: `burst ${path}`, credits: unit * 5.5 })
  await burst(() => post(key, path, body))
  for (let i = 0; i < 500 && g.services.billing.open > 0; i++) await Bun.sleep(10)
}

test('a document named by URL counts: the gateway fetches it into the prompt after admission', async () => {
  const url = `http://127.0.0.1:${docs.port}/notes.txt`
  await expectBurstBounded('/api/beta/v1/messages', {
    model: 'claude-sonnet-4-5', max_tokens: 5,
    messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url } }, { type: 'text', text: 'summarise' }] }],
  })
}, 60_000)

test("chat's n counts: each of the n choices may use the whole cap", async () => {
  await expectBurstBounded('/api/alpha/v1/chat/completions', { model: 'gpt-4o', n: 16, max_tokens: 1_000, messages: [{ role: 'user', content: 'hi' }] })
}, 60_000)

test("OpenAI's priority tier counts: held and billed at its premium (1.7× for gpt-4o)", async () => {
  const body = { model: 'gpt-4o', max_tokens: 1_000, messages: [{ role: 'user', content: 'hi' }] }
  const priority = { ...body, service_tier: 'priority' }
  const r = await post(g.key, '/api/alpha/v1/chat/completions', priority)
  const { cost, usage } = await generation(g.key, ((await r.json()) as { id: string }).id)
  // gpt-4o at the standard tier, USD per million: input 2.5, output 10
  expect(cost).toBeCloseTo(((usage.prompt_tokens * 2.5 + usage.completion_tokens * 10) / 1e6) * 1.7, 12)
  await expectBurstBounded('/api/alpha/v1/chat/completions', priority)
  // and a batch's items asking for it
  const { key } = await g.services.keys.create({ name: 'batch priority', credits: cost * 5.5 })
  await expectBatchBounded(g, await post(key, '/api/v1/batches', { requests: Array.from({ length: 100 }, (_, i) => ({ custom_id: `p${i}`, ...priority })) }))
}, 60_000)

test("a batch item's n counts: 100 items of n 16 on a key funded for 5.5 succeed 6 or 7 times", async () => {
  const body = { model: 'gpt-4o', n: 16, max_tokens: 1_000, messages: [{ role: 'user', content: 'hi' }] }
  const unit = await unitCost('/api/alpha/v1/chat/completions', body)
  const { key } = await g.services.keys.create({ name: 'batch n', credits: unit * 5.5 })
  await expectBatchBounded(g, await post(key, '/api/v1/batches', { requests: Array.from({ length: 100 }, (_, i) => ({ custom_id: `n${i}`, ...body })) }))
}, 60_000)

test("a Claude model asked to think counts the max_tokens it is sent, not the client's", async () => {
  // max_tokens 1 with the largest effort goes upstream as the model's whole output limit
  const body = { model: 'claude-sonnet-4-5', max_tokens: 1, reasoning_effort: 'max', messages: [{ role: 'user', content: 'hi' }] }
  const r = await post(g.key, '/api/alpha/v1/chat/completions', body)
  expect(r.status).toBe(200)
  expect(up.requests.at(-1)!.json().max_tokens).toBeGreaterThan(1_000)
  await expectBurstBounded('/api/alpha/v1/chat/completions', body)
  await expectBurstBounded('/api/alpha/v1/responses', { model: 'claude-sonnet-4-5', max_output_tokens: 16, reasoning: { effort: 'high' }, input: 'hi', store: false })
}, 60_000)

test('a client that leaves while the upstream holds its prompt pays for the prompt, streamed or not', async () => {
  for (const stream of [false, true]) {
    const { key } = await g.services.keys.create({ name: `leaves ${stream}`, credits: 100 })
    const sent = up.requests.length
    const ac = new AbortController()
    // the fake upstream answers this one after 3 s: the client leaves before
    const asked = post(key, '/api/alpha/v1/chat/completions', { model: 'gpt-4o', max_tokens: 5, stream, messages: [{ role: 'user', content: `${SLOW} ${DOCUMENT}` }] }, ac.signal).catch((e) => e)
    for (let i = 0; i < 300 && up.requests.length === sent; i++) await Bun.sleep(10)
    expect(up.requests.length).toBe(sent + 1)
    ac.abort()
    await asked
    let rows: { data: (Generation & { id: string })[] } = { data: [] }
    for (let i = 0; i < 300 && rows.data.length === 0; i++) {
      await Bun.sleep(10)
      await g.services.recorder.flush()
      rows = (await (await fetch(`${g.url}/api/v1/generations`, { headers: { authorization: `Bearer ${key}` } })).json()) as typeof rows
    }
    expect(rows.data).toHaveLength(1)
    const gen = rows.data[0]!
    expect(gen.error).toBe('client disconnected')
    expect(gen.usage.prompt_tokens).toBeGreaterThan(40_000)
    expect(gen.cost).toBeGreaterThan(0)
  }
}, 60_000)
