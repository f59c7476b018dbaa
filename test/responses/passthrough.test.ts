// GPT models through the responses surface: OpenAI's own Responses API upstream (the fake
// one, replaying recorded traffic). The bytes pass through; the final object — JSON reply or
// terminal event — is completed with the spec's extras (requires_action, reasoning.summaries,
// output_text), and the thread is stored for previous_response_id.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fixture, fixtureJson } from '../helpers/fake-upstream.ts'
import { responsesFailureAfterItem } from '../helpers/responses-failure.ts'
import { frames, startResponsesRig, types, type ResponsesRig } from './e2e-helpers.ts'
import { keepsReasoning } from '../../src/surfaces/responses/passthrough.ts'

let rig: ResponsesRig
beforeAll(async () => {
  rig = await startResponsesRig()
})
afterAll(async () => {
  await rig.stop()
})

const F = (name: string) => `openai/responses/${name}`

describe('JSON replies', () => {
  test('text: the recorded response reaches the SDK with output_text and an empty reasoning.summaries; recorded', async () => {
    const want = fixtureJson(F('nonstream-text.json'))
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const r = await rig.client.responses.create({ model: 'gpt-4o', input: 'What is the capital of France?' })
    expect(rig.up.requests.at(-1)!.path).toBe('/responses')
    expect(rig.up.requests.at(-1)!.json()).toEqual({ model: 'gpt-4o', input: 'What is the capital of France?' })
    const { output_text, reasoning, ...rest } = r as any
    const { reasoning: wantReasoning, ...wantRest } = want
    expect(rest).toEqual(wantRest)
    expect(reasoning).toEqual({ ...wantReasoning, summaries: [] })
    expect(output_text).toBe(want.output[0].content[0].text)
    const g = await rig.generation(r.id)
    expect(g).toMatchObject({ endpoint: 'openai.responses', status: 'completed', stream: false })
    expect(g.usage.prompt_tokens).toBe(want.usage.input_tokens)
    expect(g.usage.completion_tokens).toBe(want.usage.output_tokens)
  })

  test('function call: status requires_action with required_action.submit_tool_outputs.tool_calls', async () => {
    const want = fixtureJson(F('nonstream-function-call.json'))
    rig.up.script({ json: fixture(F('nonstream-function-call.json')) })
    const req = fixtureJson(F('nonstream-function-call.request.json'))
    const r: any = await rig.client.responses.create({ ...req, model: 'gpt-4.1' })
    const call = want.output[0]
    expect(r.status).toBe('requires_action')
    expect(r.required_action).toEqual({ type: 'submit_tool_outputs', submit_tool_outputs: { tool_calls: [{ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }] } })
    expect(r.output).toEqual(want.output)
    expect((await rig.generation(r.id)).status).toBe('requires_action')
  })

  test('reasoning summary: reasoning.summaries holds the summary text; encrypted_content kept', async () => {
    const want = fixtureJson(F('nonstream-reasoning-summary.json'))
    rig.up.script({ json: fixture(F('nonstream-reasoning-summary.json')) })
    const r: any = await rig.client.responses.create({ model: 'gpt-5.2', input: 'think', reasoning: { effort: 'high', summary: 'auto' } })
    const summary = want.output.find((o: any) => o.type === 'reasoning').summary
    expect(summary.length).toBeGreaterThan(0)
    expect(r.reasoning.summaries).toEqual(summary.map((s: any) => ({ type: 'summary_text', text: s.text })))
    expect(r.output).toEqual(want.output)
    expect(r.usage.output_tokens_details.reasoning_tokens).toBe(want.usage.output_tokens_details.reasoning_tokens)
  })

  test("the Responses API's own parameters a GPT model gets as they came: context_management (compaction), chat-era ones left out and named", async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const context_management = [{ type: 'compaction', compact_threshold: 100_000 }]
    const res = await rig.postResponses({ model: 'gpt-4o', input: 'hi', context_management, seed: 7 })
    expect(res.status).toBe(200)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.context_management).toEqual(context_management)
    expect(sent.seed).toBeUndefined()
    expect(res.headers.get('x-switchyard-compat')).toBe('seed')
  })

  test('an upstream error status maps to the spec status (429 quota)', async () => {
    rig.up.script({ status: 429, json: fixture(F('error-429-insufficient-quota.json')) })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi' })
    expect(res.status).toBe(429)
    expect((await res.json()).error).toMatch(/quota/)
  })
})

describe('streams', () => {
  test('text: every recorded event reaches the client as it came, the final one completed with the extras', async () => {
    const sse = fixture(F('stream-text.sse'))
    rig.up.script({ sse })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi', stream: true }, { headers: { accept: 'application/json' } })
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/)
    const got = frames(await res.text())
    const want = frames(sse)
    expect(types(got)).toEqual(types(want))
    for (let i = 0; i < want.length - 1; i++) expect(got[i]).toEqual(want[i]!)
    const last = got.at(-1)!.data.response
    expect(last.output_text).toBe(want.at(-1)!.data.response.output[0].content[0].text)
    expect(last.reasoning.summaries).toEqual([])
    const g = await rig.generation(last.id)
    expect(g).toMatchObject({ endpoint: 'openai.responses', status: 'completed', stream: true })
    expect(g.usage.completion_tokens).toBe(want.at(-1)!.data.response.usage.output_tokens)
  })

  test('function call: response.requires_action before response.completed, both with status requires_action', async () => {
    const sse = fixture(F('stream-function-call.sse'))
    rig.up.script({ sse })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'weather?', stream: true })
    const got = frames(await res.text())
    const t = types(got)
    expect(t.slice(-2)).toEqual(['response.requires_action', 'response.completed'])
    expect(t.slice(0, -2)).toEqual(types(frames(sse)).slice(0, -1))
    // this recording predates sequence numbers: the added events carry none either
    expect(got.every((f) => f.data.sequence_number === undefined)).toBe(true)
    for (const f of got.slice(-2)) {
      expect(f.data.response.status).toBe('requires_action')
      expect(f.data.response.required_action.submit_tool_outputs.tool_calls[0].type).toBe('function')
    }
  })

  test('reasoning summary then a function call (with sequence numbers): requires_action takes the terminal number, completed the next', async () => {
    const sse = fixture(F('stream-reasoning-summary-function-call.sse'))
    rig.up.script({ sse })
    const res = await rig.postResponses({ model: 'gpt-5.1-codex-max', input: 'calc', reasoning: { effort: 'high', summary: 'detailed' }, stream: true })
    const got = frames(await res.text())
    const want = frames(sse)
    expect(types(got)).toEqual([...types(want).slice(0, -1), 'response.requires_action', 'response.completed'])
    expect(got.map((f) => f.data.sequence_number)).toEqual(got.map((_, i) => i))
    const r = got.at(-1)!.data.response
    const deltas = want.filter((f) => f.data.type === 'response.reasoning_summary_text.delta').map((f) => f.data.delta).join('')
    expect(r.reasoning.summaries.map((x: any) => x.text).join('')).toBe(deltas)
    expect(r.required_action.submit_tool_outputs.tool_calls).toHaveLength(1)
  })

  test("the SDK's stream helper (which rejects unknown event types) gets status requires_action on response.completed", async () => {
    rig.up.script({ sse: fixture(F('stream-function-call.sse')) })
    const s = rig.client.responses.stream({ model: 'gpt-4.1', input: 'weather?' })
    const seen: string[] = []
    for await (const e of s) seen.push(e.type)
    const r: any = await s.finalResponse()
    expect(seen).not.toContain('response.requires_action')
    expect(r.status).toBe('requires_action')
    expect(r.output[0].type).toBe('function_call')
  })

  test('reasoning summary stream: the summary events pass; summaries accumulate into reasoning.summaries', async () => {
    const sse = fixture(F('stream-reasoning-summary.sse'))
    rig.up.script({ sse })
    const s = rig.client.responses.stream({ model: 'o4-mini', input: 'think', reasoning: { effort: 'medium', summary: 'detailed' } })
    let deltas = ''
    for await (const e of s) if (e.type === 'response.reasoning_summary_text.delta') deltas += e.delta
    const r: any = await s.finalResponse()
    expect(deltas.length).toBeGreaterThan(100)
    expect(r.reasoning.summaries.map((x: any) => x.text).join('')).toBe(deltas)
    expect(r.output_text.length).toBeGreaterThan(0)
  })

  test('incomplete (max_output_tokens): response.incomplete ends the stream, status incomplete recorded', async () => {
    const sse = fixture(F('stream-incomplete-max-output-tokens.sse'))
    rig.up.script({ sse })
    const res = await rig.postResponses({ model: 'gpt-4o', input: 'story', max_output_tokens: 16, stream: true })
    const got = frames(await res.text())
    expect(types(got).at(-1)).toBe('response.incomplete')
    const last = got.at(-1)!.data.response
    expect(last.incomplete_details).toEqual({ reason: 'max_output_tokens' })
    expect((await rig.generation(last.id)).status).toBe('incomplete')
  })

  test('a failure after the stream started: the upstream error and response.failed pass, then response.completed with status failed', async () => {
    const sse = responsesFailureAfterItem()
    // the first three events arrive first, so the stream is committed before the failure
    rig.up.script(async () => {
      const { pieces, eventEnds } = (await import('../helpers/fake-upstream.ts')).ssePieces(sse)
      const enc = new TextEncoder()
      return new Response(new ReadableStream({
        async start(c) {
          for (const [i, p] of pieces.entries()) {
            c.enqueue(enc.encode(p))
            if (i + 1 === eventEnds[2]) await Bun.sleep(30)
          }
          c.close()
        },
      }), { headers: { 'content-type': 'text/event-stream' } })
    })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi', stream: true })
    expect(res.status).toBe(200)
    const got = frames(await res.text())
    expect(types(got)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'error', 'response.failed', 'response.completed'])
    const last = got.at(-1)!.data
    expect(last.response.status).toBe('failed')
    expect(last.sequence_number).toBe(got.at(-2)!.data.sequence_number + 1)
    const g = await rig.generation(last.response.id)
    expect(g.status).toBe('failed')
  })

  test('a stream the upstream cuts after some text: the events the gateway adds are numbered on from the last one relayed', async () => {
    // the deltas pass unread (only their text is taken): their numbers count all the same
    rig.up.script({ sse: fixture(F('stream-incomplete-max-output-tokens.sse')), dropAfterEvents: 10 })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi', stream: true })
    expect(res.status).toBe(200)
    const got = frames(await res.text())
    const deltas = got.filter((f) => f.data.type === 'response.output_text.delta')
    expect(deltas.length).toBeGreaterThan(1)
    expect(types(got).slice(-3)).toEqual(['response.error', 'response.failed', 'response.completed'])
    const numbers = got.map((f) => f.data.sequence_number)
    expect(numbers).toEqual(numbers.map((_, i) => i))
  })

  test('a stream cut after an output item was done: the failed response the gateway adds still holds that item', async () => {
    const sse = fixture(F('stream-reasoning-summary-function-call.sse'))
    const done = sse.split('\n\n').filter((e) => e.startsWith('event: response.output_item.done')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)).item)
    // the reasoning item done, the function call begun: then the connection drops
    rig.up.script({ sse, dropAfterEvents: 45 })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi', stream: true })
    const got = frames(await res.text())
    expect(types(got).slice(-3)).toEqual(['response.error', 'response.failed', 'response.completed'])
    const failed = got.at(-1)!.data.response
    expect(failed.status).toBe('failed')
    expect(failed.output).toEqual([done[0]])
  })

  test('a failure just after the opening snapshots, read apart from them, is an ordinary status too: they say nothing of the reply', async () => {
    // each event in a read of its own, the failure 30 ms after the snapshots
    const sse = fixture(F('stream-error-insufficient-quota.sse'))
    rig.up.script(async () => {
      const events = sse.split('\n\n').filter((e) => e.trim() !== '')
      const enc = new TextEncoder()
      return new Response(new ReadableStream({
        async start(c) {
          for (const [i, e] of events.entries()) {
            c.enqueue(enc.encode(e + '\n\n'))
            await Bun.sleep(i === 1 ? 30 : 2)
          }
          c.close()
        },
      }), { headers: { 'content-type': 'text/event-stream' } })
    })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi', stream: true })
    expect(res.status).toBe(429)
    expect((await res.json()).error).toMatch(/quota/)
    expect(res.headers.get('x-request-id')).toBeTruthy()
  })

  test('an event that is no JSON after the opening snapshots decides at once: an ordinary 502, not a wait for more', async () => {
    const [created] = fixture(F('stream-error-insufficient-quota.sse')).split('\n\n')
    // the upstream then says nothing more, and keeps the connection open
    rig.up.script({ sse: `${created}\n\ndata: {not json\n\n`, hold: true })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi', stream: true })
    expect(res.status).toBe(502)
    expect((await res.json()).error).toContain('not JSON')
  })

  test('a client that leaves while the opening snapshots wait for the next event: the upstream call ends, and the 499 is recorded', async () => {
    const [created, inProgress] = fixture(F('stream-error-insufficient-quota.sse')).split('\n\n')
    rig.up.script({ sse: `${created}\n\n${inProgress}\n\n`, hold: true })
    const { key, record } = await rig.gw.services.keys.create({ name: 'leaves-early' })
    const left = new AbortController()
    const asked = fetch(`${rig.gw.url}/api/alpha/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4.1', input: 'hi', stream: true }),
      signal: left.signal,
    }).catch(() => undefined)
    for (const until = Date.now() + 5_000; rig.up.requests.length === 0 && Date.now() < until; ) await Bun.sleep(10)
    await Bun.sleep(100)
    left.abort()
    await asked
    await rig.up.requests.at(-1)!.closed
    let rows: { http_status: number; error: string | null }[] = []
    for (const until = Date.now() + 5_000; rows.length === 0 && Date.now() < until; await Bun.sleep(20)) {
      await rig.gw.services.recorder.flush()
      rows = (await rig.gw.services.storage.sql.all('SELECT http_status, error FROM generations WHERE api_key_id = ?', [record.id])) as typeof rows
    }
    expect(rows).toEqual([{ http_status: 499, error: 'client disconnected' }])
  })

  test('the whole failing stream as the first read is an ordinary status (commit late): 429', async () => {
    rig.up.script({ body: fixture(F('stream-error-insufficient-quota.sse')), headers: { 'content-type': 'text/event-stream' } })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: 'hi', stream: true })
    expect(res.status).toBe(429)
    expect((await res.json()).error).toMatch(/quota/)
  })
})

describe("file ids in a tool's output", () => {
  // the upstream knows no gateway file id, and one of the operator's own upstream account must
  // not be reachable through the gateway: inlined as in a message, or refused
  test('a gateway file id in a function_call_output is inlined; an unknown one is a 400 naming it', async () => {
    const up = await fetch(`${rig.gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'the tool read this', filename: 'out.txt' }) })
    const fileId = ((await up.json()) as { id: string }).id
    const input = (id: string) => [
      { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_file', file_id: id }] },
    ]
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const res = await rig.postResponses({ model: 'gpt-4.1', input: input(fileId), store: false })
    expect(res.status).toBe(200)
    const sent = rig.up.requests.at(-1)!
    expect(sent.body).not.toContain(fileId)
    expect(sent.json().input[1].output).toEqual([{ type: 'input_text', text: 'the tool read this' }])
    const before = rig.up.requests.length
    const bad = await rig.postResponses({ model: 'gpt-4.1', input: input('file-OPERATORS-OWN'), store: false })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toStartWith('input[1].output[0].file_id: no such file file-OPERATORS-OWN')
    expect(rig.up.requests.length).toBe(before)
  })
})

describe('file ids outside a message: bare parts, a screenshot', () => {
  // the same rule as in a message: a gateway file id is inlined, any other (the operator's own
  // upstream account's) is refused before the upstream is asked
  const upload = async (content: Blob, filename: string) => {
    const form = new FormData()
    form.append('purpose', 'user_data')
    form.append('file', content, filename)
    const res = await fetch(`${rig.gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${rig.gw.key}` }, body: form })
    return ((await res.json()) as { id: string }).id
  }
  const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

  test('an input of bare parts (one user message) naming a file: inlined when the key\'s, a 400 naming it otherwise', async () => {
    const id = await upload(new Blob(['the notes']), 'notes.txt')
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const ok = await rig.postResponses({ model: 'gpt-4.1', input: [{ type: 'input_file', file_id: id }, { type: 'input_text', text: 'summarise' }] })
    expect(ok.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().input).toEqual([{ type: 'input_text', text: 'the notes' }, { type: 'input_text', text: 'summarise' }])
    const before = rig.up.requests.length
    for (const type of ['input_file', 'input_image']) {
      const bad = await rig.postResponses({ model: 'gpt-4.1', input: [{ type, file_id: 'file-OPERATORS-OWN' }] })
      expect(bad.status).toBe(400)
      expect((await bad.json()).error).toStartWith('input[0].file_id: no such file file-OPERATORS-OWN')
    }
    expect(rig.up.requests.length).toBe(before)
  })

  test("a computer call's screenshot naming a file: the key's image inlined, another id a 400", async () => {
    const id = await upload(new Blob([PNG], { type: 'image/png' }), 'shot.png')
    const input = (file: string) => [
      { type: 'computer_call', id: 'cu_1', call_id: 'c1', action: { type: 'screenshot' }, pending_safety_checks: [], status: 'completed' },
      { type: 'computer_call_output', call_id: 'c1', output: { type: 'computer_screenshot', file_id: file } },
    ]
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const ok = await rig.postResponses({ model: 'gpt-4.1', input: input(id), store: false })
    expect(ok.status).toBe(200)
    expect(rig.up.requests.at(-1)!.json().input[1].output).toEqual({ type: 'computer_screenshot', image_url: `data:image/png;base64,${PNG.toString('base64')}` })
    const before = rig.up.requests.length
    const bad = await rig.postResponses({ model: 'gpt-4.1', input: input('file-OPERATORS-OWN'), store: false })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toStartWith('input[1].output.file_id: no such file file-OPERATORS-OWN')
    expect(rig.up.requests.length).toBe(before)
  })
})

describe('threads on the pass-through path', () => {
  test('previous_response_id: the upstream gets the whole input with store:false and no item ids; the reply names the previous id', async () => {
    rig.up.script({ json: fixture(F('nonstream-function-call.json')) })
    const req = fixtureJson(F('nonstream-function-call.request.json'))
    const first: any = await rig.client.responses.create({ ...req, model: 'gpt-4.1' })
    const call = first.required_action.submit_tool_outputs.tool_calls[0]
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const second: any = await rig.client.responses.create({ model: 'gpt-4.1', previous_response_id: first.id, tool_outputs: [{ tool_call_id: call.id, output: '22C' }], tools: req.tools } as any)
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.store).toBe(false)
    expect(sent.previous_response_id).toBeUndefined()
    expect(sent.tool_outputs).toBeUndefined()
    expect(sent.input).toEqual([
      ...(typeof req.input === 'string' ? [{ type: 'message', role: 'user', content: req.input }] : req.input),
      { type: 'function_call', status: 'completed', arguments: call.function.arguments, call_id: call.id, name: call.function.name },
      { type: 'function_call_output', call_id: call.id, output: '22C' },
    ])
    expect(second.previous_response_id).toBe(first.id)
    expect(second.status).toBe('completed')
  })

  test('streamed: the opening snapshots name the previous reply and the store the client asked for, as the final one does', async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const first = await rig.client.responses.create({ model: 'gpt-4.1', input: 'hello' })
    rig.up.script({ sse: fixture(F('stream-text.sse')) })
    const stream = await rig.client.responses.create({ model: 'gpt-4.1', previous_response_id: first.id, input: 'again', stream: true })
    const snapshots: { type: string; previous: unknown; store: unknown }[] = []
    for await (const ev of stream) if ('response' in ev) snapshots.push({ type: ev.type, previous: ev.response.previous_response_id, store: (ev.response as { store?: unknown }).store })
    // upstream it went with its history and store:false; the client sees its own turn throughout
    expect(rig.up.requests.at(-1)!.json().store).toBe(false)
    expect(snapshots.map((x) => x.type)).toContain('response.created')
    for (const x of snapshots) expect(x).toEqual({ type: x.type, previous: first.id, store: true })
  })
})

describe('reasoning items on a continued thread', () => {
  test('a reasoning item with encrypted_content goes back whole (id kept); other items lose their ids; store:false', async () => {
    const want = fixtureJson(F('nonstream-reasoning-summary.json'))
    rig.up.script({ json: fixture(F('nonstream-reasoning-summary.json')) })
    const first: any = await rig.client.responses.create({ model: 'gpt-5.2', input: [{ type: 'message', id: 'msg_client', role: 'user', content: 'think' }] as any, reasoning: { effort: 'high', summary: 'auto' }, include: ['reasoning.encrypted_content'] })
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.2', previous_response_id: first.id, input: 'more' })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.store).toBe(false)
    const reasoning = want.output.find((o: any) => o.type === 'reasoning')
    expect(reasoning.encrypted_content.length).toBeGreaterThan(20)
    expect(sent.input).toContainEqual(reasoning)
    const others = sent.input.filter((i: any) => i.type !== 'reasoning')
    expect(others.every((i: any) => i.id === undefined)).toBe(true)
    expect(others.map((i: any) => i.type ?? 'message')).toEqual(['message', 'message', 'message'])
  })

  // OpenAI's own previous_response_id keeps a reasoning model's reasoning between its call and
  // the call's output; a thread the gateway keeps goes up with store:false, where only the
  // encrypted content can carry it, so the gateway asks for it on every reply it keeps
  test('a tool loop continued by previous_response_id: the reasoning before the call goes back whole, asked for though the client did not', async () => {
    const sse = fixture(F('stream-reasoning-summary-function-call.sse'))
    // as the final event has them (its encrypted content is not the item's done event's: both OpenAI's)
    const [reasoning, call] = frames(sse).at(-1)!.data.response.output
    expect(reasoning.type).toBe('reasoning')
    expect(call.type).toBe('function_call')
    rig.up.script({ sse })
    const res = await rig.postResponses({ model: 'gpt-5.1-codex-max', input: 'calc', tools: [{ type: 'function', name: call.name, parameters: { type: 'object', properties: {} } }], reasoning: { effort: 'high' }, stream: true })
    const first = frames(await res.text()).at(-1)!.data.response
    expect(rig.up.requests.at(-1)!.json().include).toEqual(['reasoning.encrypted_content'])
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.1-codex-max', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '19' }] })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.store).toBe(false)
    expect(sent.include).toEqual(['reasoning.encrypted_content'])
    const { id: _callId, ...callWithoutId } = call
    expect(sent.input).toEqual([{ type: 'message', role: 'user', content: 'calc' }, reasoning, callWithoutId, { type: 'function_call_output', call_id: call.call_id, output: '19' }])
  })

  test("a thread's reasoning goes back to the model it came from only: another may be served where it cannot be read", async () => {
    const sse = fixture(F('stream-reasoning-summary-function-call.sse'))
    const [, call] = frames(sse).at(-1)!.data.response.output
    rig.up.script({ sse })
    const res = await rig.postResponses({ model: 'gpt-5.1-codex-max', input: 'calc', tools: [{ type: 'function', name: call.name, parameters: { type: 'object', properties: {} } }], stream: true })
    const first = frames(await res.text()).at(-1)!.data.response
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.2', previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '19' }] })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.input.map((i: any) => i.type)).toEqual(['message', 'function_call', 'function_call_output'])
  })

  test("a conversation's reasoning goes back to the model whose turn made it only, and its listing shows no more than OpenAI's", async () => {
    const sse = fixture(F('stream-reasoning-summary-function-call.sse'))
    const [reasoning, call] = frames(sse).at(-1)!.data.response.output
    const conversation: any = await rig.client.conversations.create({})
    rig.up.script({ sse })
    const tools = [{ type: 'function', name: call.name, parameters: { type: 'object', properties: {} } }]
    await (await rig.postResponses({ model: 'gpt-5.1-codex-max', conversation: conversation.id, input: 'calc', tools, stream: true })).text()
    // another model: the call and its output go on, the reasoning stays behind
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.2', conversation: conversation.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '19' }], tools } as any)
    expect(rig.up.requests.at(-1)!.json().input.map((i: any) => i.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output'])
    // its own model again: the reasoning goes back whole, as OpenAI gave it
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.1-codex-max', conversation: conversation.id, input: 'again', tools } as any)
    const sent = rig.up.requests.at(-1)!.json().input
    expect(sent.filter((i: any) => i.type === 'reasoning')).toEqual([reasoning])
    // the conversation lists the item as OpenAI gave it, without the model the gateway keeps beside it
    const items: any[] = []
    for await (const it of rig.client.conversations.items.list(conversation.id)) items.push(it)
    expect(items.filter((i) => i.type === 'reasoning')).toEqual([reasoning])
    expect(await rig.client.conversations.items.retrieve(reasoning.id, { conversation_id: conversation.id })).toMatchObject(reasoning)
    // the field is the gateway's: one a client sends is not shown back either, on any route
    const added: any = await rig.client.conversations.items.create(conversation.id, { items: [{ ...reasoning, id: 'rs_client', switchyard_model: 'o3' }] } as any)
    expect(added.data[0]).toEqual({ ...reasoning, id: 'rs_client' })
  })

  test('a model served by deployments of more than one provider keeps no reasoning for a thread: the next turn may go to the other', () => {
    const at = (...providers: string[]) => providers.map((provider) => ({ provider, upstreamId: 'gpt-5', weight: 1, priority: 0 }))
    expect(keepsReasoning({ reasoning: true, deployments: at('openai') })).toBe(true)
    expect(keepsReasoning({ reasoning: true, deployments: at('openai', 'openai') })).toBe(true)
    expect(keepsReasoning({ reasoning: true, deployments: at('openai', 'azure') })).toBe(false)
    expect(keepsReasoning({ reasoning: false, deployments: at('openai') })).toBe(false)
  })

  test("the include the gateway adds joins the client's own; a turn it keeps nothing of, or of a model that does not reason, goes up without it", async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.2', input: 'a', include: ['message.output_text.logprobs'] })
    expect(rig.up.requests.at(-1)!.json().include).toEqual(['message.output_text.logprobs', 'reasoning.encrypted_content'])
    await rig.client.responses.create({ model: 'gpt-5.2', input: 'a', store: false })
    expect(rig.up.requests.at(-1)!.json().include).toBeUndefined()
    await rig.client.responses.create({ model: 'gpt-4.1', input: 'a' })
    expect(rig.up.requests.at(-1)!.json().include).toBeUndefined()
  })

  test('a reasoning item without encrypted content cannot be replayed without the upstream store: it is left out, never an empty message', async () => {
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const first: any = await rig.client.responses.create({ model: 'gpt-5.2', input: 'a' })
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.2', previous_response_id: first.id, input: [{ type: 'reasoning', id: 'rs_x', summary: [] }, { role: 'user', content: 'b' }] })
    const sent = rig.up.requests.at(-1)!.json()
    expect(sent.input.some((i: any) => i.type === 'reasoning')).toBe(false)
    expect(sent.input.every((i: any) => i.type !== 'message' || (i.content !== '' && i.content?.length !== 0))).toBe(true)
  })
})

describe("a Claude model's thinking, continued by a GPT model", () => {
  // The thinking rides in a reasoning item sealed by the gateway: OpenAI cannot decrypt it and
  // refuses content it cannot, so it stays behind, on a thread and in a replayed input alike.
  test('the sealed reasoning item never reaches OpenAI; the text of the turn does', async () => {
    rig.up.script({ json: fixture('anthropic/messages/nonstream-thinking.json') })
    const first: any = await rig.client.responses.create({ model: 'claude-sonnet-4-5', input: 'how do I cross a street?', reasoning: { effort: 'low' } })
    const sealed = first.output.find((o: any) => o.type === 'reasoning')
    expect(sealed.encrypted_content.startsWith('sy1.')).toBe(true)
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    await rig.client.responses.create({ model: 'gpt-5.2', previous_response_id: first.id, input: 'and at night?' })
    const threaded = rig.up.requests.at(-1)!.json()
    expect(threaded.input.some((i: any) => i.type === 'reasoning')).toBe(false)
    expect(JSON.stringify(threaded.input)).toContain('and at night?')
    expect(threaded.input.filter((i: any) => i.role === 'assistant')).toHaveLength(1)
    await rig.client.responses.create({ model: 'gpt-5.2', store: false, input: [{ role: 'user', content: 'how do I cross a street?' }, ...first.output, { role: 'user', content: 'and at night?' }] })
    const replayed = rig.up.requests.at(-1)!.json()
    expect(replayed.input.some((i: any) => i.type === 'reasoning')).toBe(false)
    expect(replayed.input).toHaveLength(3)
  })
})

describe('files: gateway file ids are read with the caller key', () => {
  test('input_file with a gateway file id is inlined for the Responses upstream; another key gets a 400 naming it', async () => {
    const { toFile } = await import('openai')
    const f = await rig.client.files.create({ file: await toFile(Buffer.from('%PDF-1.4 tiny'), 'doc.pdf'), purpose: 'user_data' })
    rig.up.script({ json: fixture(F('nonstream-text.json')) })
    const r = await rig.client.responses.create({ model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_file', file_id: f.id }, { type: 'input_text', text: 'summarise' }] }] })
    expect(r.status).toBe('completed')
    const part = rig.up.requests.at(-1)!.json().input[0].content[0]
    expect(part).toEqual({ type: 'input_file', filename: 'doc.pdf', file_data: `data:application/pdf;base64,${Buffer.from('%PDF-1.4 tiny').toString('base64')}` })
    const other = await rig.gw.services.keys.create({ name: 'other-files' })
    const before = rig.up.requests.length
    const res = await rig.postResponses({ model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_file', file_id: f.id }] }] }, { key: other.key })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toContain('input[0].content[0].file_id')
    expect(rig.up.requests.length).toBe(before)
  })
})
