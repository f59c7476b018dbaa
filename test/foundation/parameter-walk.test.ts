// Reject or translate, out loud: every parameter each surface accepts, sent alone to a model of
// each family, in both cross-family modes, must be forwarded upstream, translated into
// something upstream, named in x-switchyard-compat, or refused with a 400 naming it — never
// answered 200 with the parameter silently gone. The parameters walked are the surface's own
// table (src/surfaces/<surface>/params.ts), so a parameter added there without a sample value
// here fails this test until it is given one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { knownNames, type ParamTable } from '../../src/routing/params.ts'
import { PARAMS as CHAT } from '../../src/surfaces/chat/params.ts'
import { PARAMS as MESSAGES } from '../../src/surfaces/messages/params.ts'
import { PARAMS as RESPONSES } from '../../src/surfaces/responses/params.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream, upstreamEnv } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

type Surface = 'chat' | 'messages' | 'responses'
const TABLES: Record<Surface, ParamTable> = { chat: CHAT, messages: MESSAGES, responses: RESPONSES }

const fn = { type: 'object', properties: { q: { type: 'string' } } }
const mcp = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }]

/** Fields every request of the surface carries: not walked. */
const BASE: Record<Surface, Record<string, unknown>> = {
  chat: { messages: [{ role: 'user', content: 'hi' }] },
  messages: { max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }] },
  responses: { input: 'hi' },
}
const STRUCTURAL = new Set(['model', 'messages', 'input', 'stream'])

/** Fields a parameter means something only beside (a tool choice needs tools): sent with it, and in its baseline. */
const COMPANIONS: Record<Surface, Record<string, Record<string, unknown>>> = {
  chat: { tool_choice: { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }] } },
  messages: { tool_choice: { tools: [{ name: 'f', input_schema: { type: 'object', properties: {} } }] }, parallel_tool_calls: { tools: [{ name: 'f', input_schema: { type: 'object', properties: {} } }] } },
  responses: { tool_choice: { tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }] } },
}

/**
 * What the gateway acts on itself, so nothing goes upstream for it — each with where that is
 * shown: `stream_options` shapes the stream the gateway writes (its usage chunk: the chat and
 * responses stream tests); `store` decides whether the gateway keeps the response and its
 * thread, and `max_tool_calls` caps the calls it takes from a translated reply (both checked
 * below; the OpenAI upstream gets them too, on the pass-through path).
 */
const GATEWAY_OWN: Record<Surface, Set<string>> = {
  chat: new Set(['stream_options']),
  messages: new Set(),
  responses: new Set(['stream_options', 'store', 'max_tool_calls']),
}

/** One valid value of each parameter, as a client of that surface sends it. */
const SAMPLES: Record<Surface, Record<string, unknown>> = {
  chat: {
    temperature: 0.5, max_tokens: 50, max_completion_tokens: 50, top_p: 0.9, stop: ['END'],
    frequency_penalty: 0.5, presence_penalty: 0.5, response_format: { type: 'json_object' }, reasoning_effort: 'low',
    tools: [{ type: 'function', function: { name: 'f', parameters: fn } }], tool_choice: 'none', function_call: 'none',
    functions: [{ name: 'f', parameters: fn }], n: 1, seed: 1, user: 'u1', logit_bias: { '50256': -100 },
    parallel_tool_calls: false, service_tier: 'auto', store: false, metadata: { k: 'v' }, stream_options: { include_usage: true },
    web_search_options: {}, prompt_cache_key: 'k1', modalities: ['text'], audio: { voice: 'alloy', format: 'mp3' },
    prediction: { type: 'content', content: 'x' }, verbosity: 'low', logprobs: true, top_logprobs: 2, safety_identifier: 's1',
    prompt_cache_options: { mode: 'explicit', ttl: '12h' }, moderation: { model: 'omni-moderation-latest' },
    prompt_cache_retention: '24h', top_k: 5, stop_sequences: ['END'], cache_control: { type: 'ephemeral' },
    thinking: { type: 'enabled', budget_tokens: 1024 }, output_config: { effort: 'low' }, context_management: { edits: [] },
    container: 'cntr_1', mcp_servers: mcp, inference_geo: 'us',
  },
  messages: {
    max_tokens: 100, temperature: 0.5, top_p: 0.9, top_k: 5, stop_sequences: ['END'], metadata: { user_id: 'u1' },
    thinking: { type: 'enabled', budget_tokens: 1024 }, cache_control: { type: 'ephemeral' },
    tools: [{ name: 'f', input_schema: fn }], tool_choice: { type: 'none' }, parallel_tool_calls: false,
    pause_on_call_tools_start: true, service_tier: 'auto', reasoning_effort: 'low', betas: ['context-management-2025-06-27'],
    system: 'be brief', context_management: { edits: [] }, output_config: { effort: 'low' },
    output_format: { type: 'json_schema', schema: fn }, container: 'cntr_1', mcp_servers: mcp, inference_geo: 'us',
    speed: 'fast', diagnostics: {}, user_profile_id: 'up_1', workspace_id: 'wrkspc_1', billing_policy: 'standard',
    compaction: { enabled: true }, fallbacks: [{ model: 'claude-haiku-4-5' }], fallback_credit_token: 'fct_1', thread: 'thr_1',
  },
  responses: {
    instructions: 'be brief', system: 'be brief', tools: [{ type: 'function', name: 'f', parameters: fn }], tool_choice: 'none',
    temperature: 0.5, top_p: 0.9, max_output_tokens: 50, response_format: { type: 'json_object' }, reasoning_effort: 'low',
    reasoning_summary: 'auto', reasoning: { effort: 'low' }, mcp_servers: mcp, web_search_options: {},
    prompt_cache_retention: '24h', include: ['reasoning.encrypted_content', 'message.output_text.logprobs'], previous_response_id: 'resp_unknown',
    tool_outputs: [{ tool_call_id: 'call_1', output: 'x' }], truncation: 'auto', max_tool_calls: 3,
    audio: { voice: 'alloy', format: 'mp3' }, modalities: ['text'], prediction: { type: 'content', content: 'x' }, strict: true,
    verbosity: 'low', metadata: { k: 'v' }, store: false, conversation: 'conv_1', n: 1, seed: 1, user: 'u1',
    logit_bias: { '50256': -100 }, frequency_penalty: 0.5, presence_penalty: 0.5, functions: [{ name: 'f', parameters: fn }],
    function_call: 'none', text: { format: { type: 'text' }, verbosity: 'low' }, parallel_tool_calls: false, prompt_cache_key: 'k1',
    safety_identifier: 's1', service_tier: 'auto', stream_options: { include_obfuscation: false }, top_logprobs: 2,
    background: true, background_options: { completion_window: '2h' }, prompt: { id: 'pmpt_1' }, context_management: [{ type: 'compaction', compact_threshold: 100_000 }],
    client_metadata: { k: 'v' }, prompt_cache_options: { mode: 'explicit', ttl: '12h' }, moderation: { model: 'omni-moderation-latest' },
    access_programs: { cyber: 'standard' }, image: { context_compression: 'auto' },
  },
}

const PATHS: Record<Surface, string> = { chat: '/api/alpha/v1/chat/completions', messages: '/api/beta/v1/messages', responses: '/api/alpha/v1/responses' }
const MODELS = { GPT: 'gpt-4o', Claude: 'claude-sonnet-4-5' }

let up: FakeUpstream

/** Recorded replies by wire, each under an id of its own (as a real upstream gives them). */
const fresh = (path: string, prefix: string) => ({ json: { ...fixtureJson(path), id: `${prefix}${crypto.randomUUID().replaceAll('-', '')}` } })
const byWire = (req: { path: string }) => {
  if (req.path.includes('/chat/completions')) return fresh('openai/chat/nonstream-text.json', 'chatcmpl-')
  if (req.path.includes('/responses')) return fresh('openai/responses/nonstream-text.json', 'resp_')
  return fresh('anthropic/messages/nonstream-text.json', 'msg_')
}
let gw: Gateway
let gwTranslate: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(byWire)
  const env = {
    ...upstreamEnv(up),
    SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000', SWITCHYARD_IP_RPM: '1000000',
  }
  gw = await startGateway({ env })
  // compat.cross_family: translate, the other mode (a gateway-wide setting)
  gwTranslate = await startGateway({ env: { ...env, SWITCHYARD_CROSS_FAMILY: 'translate' } })
  // the container the samples name is one a reply handed the walk's key: another is a 404 (containers/check.ts)
  for (const g of [gw, gwTranslate]) for (const k of await g.services.keys.list()) g.services.containers!.grant(k.id, 'cntr_1')
})
afterAll(async () => {
  await gw.stop()
  await gwTranslate.stop()
  await up.stop()
})

type Outcome = { kind: 'refused' | 'named' | 'forwarded' | 'translated' } | { kind: 'LOST' | 'odd'; detail: string }

async function send(surface: Surface, model: string, translate: boolean, extra: Record<string, unknown>) {
  const before = up.requests.length
  const g = translate ? gwTranslate : gw
  const res = await fetch(g.url + PATHS[surface], {
    method: 'POST',
    headers: { authorization: `Bearer ${g.key}`, 'x-api-key': g.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model, ...BASE[surface], ...extra }),
  })
  const text = await res.text()
  const last = up.requests.length > before ? up.requests.at(-1)! : undefined
  // what reached the upstream: its body, and the header a beta list becomes
  const upstream = last ? { body: last.json(), beta: last.headers['anthropic-beta'] ?? null } : undefined
  return { status: res.status, text, compat: res.headers.get('x-switchyard-compat') ?? '', upstream }
}

const stable = (b: unknown) => JSON.stringify(b)

function classify(param: string, r: Awaited<ReturnType<typeof send>>, baseline: unknown): Outcome {
  if (r.status === 400) {
    const error = (JSON.parse(r.text) as { error: string }).error
    return error.includes(param) ? { kind: 'refused' } : { kind: 'odd', detail: `400 not naming it: ${error.slice(0, 200)}` }
  }
  if (r.status !== 200) return { kind: 'odd', detail: `${r.status}: ${r.text.slice(0, 200)}` }
  if (r.compat.split(',').some((e) => e.trim().startsWith(param))) return { kind: 'named' }
  if (r.upstream === undefined) return { kind: 'odd', detail: 'answered 200 without an upstream call' }
  if (Object.hasOwn(r.upstream.body as object, param)) return { kind: 'forwarded' }
  if (stable(r.upstream) !== stable(baseline)) return { kind: 'translated' }
  return { kind: 'LOST', detail: `200, nothing upstream differs, compat header: "${r.compat}"` }
}

for (const surface of ['chat', 'messages', 'responses'] as const) {
  describe(`${surface} surface`, () => {
    test('every parameter it accepts has a sample value here', () => {
      const missing = knownNames(TABLES[surface]).filter((p) => !STRUCTURAL.has(p) && !(p in SAMPLES[surface]))
      expect(missing).toEqual([])
    })

    for (const [family, model] of Object.entries(MODELS)) {
      for (const translate of [false, true]) {
        test(`${family} model, cross-family ${translate ? 'translate' : 'reject'}: each parameter forwarded, translated, named or refused`, async () => {
          const baselines = new Map<string, unknown>()
          const baseline = async (companion: Record<string, unknown>) => {
            const k = JSON.stringify(companion)
            if (!baselines.has(k)) {
              const b = await send(surface, model, translate, companion)
              expect(b.status).toBe(200)
              baselines.set(k, b.upstream)
            }
            return baselines.get(k)
          }
          const lost: string[] = []
          const kinds = new Map<string, string[]>()
          for (const param of knownNames(TABLES[surface]).filter((p) => !STRUCTURAL.has(p) && !GATEWAY_OWN[surface].has(p))) {
            const companion = COMPANIONS[surface][param] ?? {}
            const o = classify(param, await send(surface, model, translate, { ...companion, [param]: SAMPLES[surface][param] }), await baseline(companion))
            if (o.kind === 'LOST' || o.kind === 'odd') lost.push(`${param}: ${o.kind} (${o.detail})`)
            kinds.set(o.kind, [...(kinds.get(o.kind) ?? []), param])
          }
          if (process.env.WALK_SHOW) console.log(surface, family, translate, JSON.stringify(Object.fromEntries(kinds)))
          expect(lost).toEqual([])
          // the walk did reach the upstream: most parameters of a family's own surface go there
          expect((kinds.get('forwarded') ?? []).length + (kinds.get('translated') ?? []).length).toBeGreaterThan(3)
        }, 60_000)
      }
    }
  })
}

test('store: false on the responses surface is the gateway\'s own: the response is not kept, on either family', async () => {
  for (const model of Object.values(MODELS)) {
    const kept = await send('responses', model, false, {})
    const gone = await send('responses', model, false, { store: false })
    const get = (id: string) => fetch(`${gw.url}/api/alpha/v1/responses/${id}`, { headers: { authorization: `Bearer ${gw.key}` } })
    expect((await get((JSON.parse(kept.text) as { id: string }).id)).status).toBe(200)
    expect((await get((JSON.parse(gone.text) as { id: string }).id)).status).toBe(404)
  }
})

test("chat metadata for a Claude model: its user_id goes upstream as Anthropic's metadata.user_id, the rest is named", async () => {
  const r = await send('chat', MODELS.Claude, false, { metadata: { user_id: 'u-42', team: 'x' } })
  expect(r.status).toBe(200)
  expect(r.upstream!.body.metadata).toEqual({ user_id: 'u-42' })
  expect(r.compat.split(',').map((e) => e.trim())).toContain('metadata')
  const only = await send('chat', MODELS.Claude, false, { metadata: { user_id: 'u-42' } })
  expect(only.upstream!.body.metadata).toEqual({ user_id: 'u-42' })
  expect(only.compat).not.toContain('metadata')
})

test('max_tool_calls on the responses surface for a Claude model: the gateway takes at most that many calls from the reply', async () => {
  const call = (n: number) => ({ type: 'tool_use', id: `toolu_${n}`, name: 'f', input: { q: String(n) } })
  const reply = { json: { id: 'msg_two_calls', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [call(1), call(2)], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 } } }
  const tools = SAMPLES.responses.tools
  up.script(reply, reply, byWire)
  const capped = JSON.parse((await send('responses', MODELS.Claude, false, { tools, max_tool_calls: 1 })).text) as { output: { type: string }[] }
  const all = JSON.parse((await send('responses', MODELS.Claude, false, { tools })).text) as { output: { type: string }[] }
  expect(all.output.filter((o) => o.type === 'function_call')).toHaveLength(2)
  expect(capped.output.filter((o) => o.type === 'function_call')).toHaveLength(1)
})

test("OpenAI's request options on chat and responses: a value of the wrong shape is a 400 naming the field", async () => {
  const wrong: [Surface, string, unknown][] = [
    ['chat', 'moderation', { policy: {} }], ['chat', 'prompt_cache_options', 'explicit'], ['chat', 'prompt_cache_options', { prewarm: 'yes' }],
    ['responses', 'moderation', 'omni'], ['responses', 'prompt_cache_options', { ttl: 12 }], ['responses', 'access_programs', ['standard']],
    ['responses', 'image', { context_compression: true }],
  ]
  for (const [surface, param, value] of wrong) {
    const r = await send(surface, MODELS.GPT, false, { [param]: value })
    expect([r.status, r.text]).toEqual([400, expect.stringContaining(param)])
  }
})
