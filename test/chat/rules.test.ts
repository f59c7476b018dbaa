import { describe, expect, test } from 'bun:test'
import { applyFamilyRules, unknownParams } from '../../src/routing/params.ts'
import { PARAMS } from '../../src/surfaces/chat/params.ts'
import { PARAMS as MESSAGES } from '../../src/surfaces/messages/params.ts'
import { PARAMS as RESPONSES } from '../../src/surfaces/responses/params.ts'
import { passthroughBody } from '../../src/surfaces/chat/passthrough.ts'
import { catalog, decode, rejection, user } from './helpers.ts'
import { chatSurface } from '../../src/surfaces/chat/codec.ts'
import { resolveModel } from '../../src/routing/router.ts'
import type { CrossFamilyMode } from '../../src/routing/params.ts'

/** The model a pass-through body goes to: gpt-4o, or an OpenAI model that reasons. */
const GPT4O = { id: 'gpt-4o', reasons: false, compatible: false }
const at = (id: string) => ({ id, reasons: true, compatible: false })

describe('family rules table', () => {
  test("a parameter one surface calls foreign is another surface's own: messages carries parallel_tool_calls and service_tier to Claude", () => {
    expect(() => applyFamilyRules({ parallel_tool_calls: false }, PARAMS, 'anthropic', 'reject', 'claude-x')).toThrow('parallel_tool_calls')
    expect(applyFamilyRules({ service_tier: 'auto' }, PARAMS, 'anthropic', 'reject', 'claude-x').removed).toEqual(['service_tier'])
    const own = applyFamilyRules({ parallel_tool_calls: false, service_tier: 'auto' }, MESSAGES, 'anthropic', 'reject', 'claude-x')
    expect(own).toEqual({ counterpart: {}, removed: [], compat: [] })
    // and the responses surface keeps `store` (its threads) for Claude
    expect(applyFamilyRules({ store: true }, RESPONSES, 'anthropic', 'reject', 'claude-x').removed).toEqual([])
  })
  test('reject mode: a 400 that lists every offending parameter', () => {
    expect(() => applyFamilyRules({ n: 1, seed: 2 }, PARAMS, 'anthropic', 'reject', 'claude-x')).toThrow('Parameters not supported for Claude-family model claude-x: n, seed')
    expect(applyFamilyRules({ temperature: 1 }, PARAMS, 'anthropic', 'reject', 'claude-x').compat).toEqual([])
  })
  test('unknownParams names only what the surface does not know', () => {
    expect(unknownParams({ model: 'x', messages: [], verbosity: 'low', modalities: [], zap: 1 }, PARAMS)).toEqual(['zap'])
  })
})

describe('translate mode (compat.cross_family: translate)', () => {
  test('Claude model: legacy functions beside tools both reach the model, neither shadows the other', () => {
    const { ir, rules } = decode({
      model: 'claude-sonnet-4-5', messages: user(),
      tools: [{ type: 'function', function: { name: 't', parameters: { type: 'object', properties: {} } } }],
      functions: [{ name: 'f', parameters: { type: 'object', properties: {} } }],
    }, 'translate')
    expect(ir.tools?.map((t) => t.name)).toEqual(['t', 'f'])
    expect(rules.compat).toEqual(['functions->tools'])
  })
  test('Claude model: counterparts are translated, the rest dropped, all named', () => {
    const { ir, rules } = decode({
      model: 'claude-sonnet-4-5', messages: user(),
      max_completion_tokens: 300, parallel_tool_calls: false, seed: 1, logit_bias: { 5: 1 },
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      tools: [{ type: 'function', function: { name: 'f' } }],
    }, 'translate')
    expect(ir.maxTokens).toBe(300)
    expect(ir.toolChoice).toEqual({ type: 'auto', disableParallel: true })
    expect(ir.responseFormat).toEqual({ type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true, description: undefined })
    expect(rules.compat).toEqual(['max_completion_tokens->max_tokens', 'parallel_tool_calls->tool_choice.disable_parallel_tool_use', 'seed', 'logit_bias', 'response_format->output_config.format'])
  })
  test('OpenAI model: thinking / output_config.effort → reasoning_effort, stop_sequences → stop, top_k dropped', () => {
    const thought = decode({ model: 'gpt-5.1', messages: user(), thinking: { type: 'enabled', budget_tokens: 20_000 }, top_k: 3 }, 'translate')
    const pt = passthroughBody(thought.body, thought.rules, at('gpt-5.1')).body
    expect(pt.reasoning_effort).toBe('high')
    expect(pt.top_k).toBeUndefined()
    expect(pt.thinking).toBeUndefined()
    expect(thought.rules.compat).toEqual(['thinking->reasoning_effort', 'top_k'])
    const stops = decode({ model: 'gpt-4o', messages: user(), stop_sequences: ['X'], stop: 'Y' }, 'translate')
    expect(passthroughBody(stops.body, stops.rules, GPT4O).body.stop).toEqual(['Y', 'X'])
    expect(stops.rules.compat).toEqual(['stop_sequences->stop'])
    // a model that reasons refuses `stop` (but at effort none): the translated sequences stay out, named
    const o3 = decode({ model: 'o3', messages: user(), stop_sequences: ['X'] }, 'translate')
    expect(passthroughBody(o3.body, o3.rules, at('o3')).body.stop).toBeUndefined()
    expect(o3.rules.compat).toEqual(['stop_sequences'])
    const none = decode({ model: 'gpt-5.1', messages: user(), stop_sequences: ['X'], reasoning_effort: 'none' }, 'translate')
    expect(passthroughBody(none.body, none.rules, at('gpt-5.1')).body.stop).toEqual(['X'])
    const oc = decode({ model: 'gpt-5', messages: user(), output_config: { effort: 'low' } }, 'translate')
    expect(passthroughBody(oc.body, oc.rules, at('gpt-5')).body.reasoning_effort).toBe('low')
  })
  // OpenAI refuses any reasoning_effort for a model that does not reason, and an effort outside a
  // reasoning model's own tiers: Claude's thinking is spelled as the translated request spells it
  test("Claude's thinking for a GPT model: left out for one that does not reason, each model's own tier for one that does", () => {
    const effort = (model: string, thinking: object, target = at(model)) => {
      const { body, rules } = decode({ model, messages: user(), thinking }, 'translate')
      return { effort: passthroughBody(body, rules, target).body.reasoning_effort, compat: rules.compat }
    }
    expect(effort('gpt-4o', { type: 'enabled', budget_tokens: 20_000 }, GPT4O)).toEqual({ effort: undefined, compat: ['thinking'] })
    expect(effort('gpt-4.1', { type: 'disabled' }, { ...GPT4O, id: 'gpt-4.1' })).toEqual({ effort: undefined, compat: ['thinking'] })
    // thinking off: o3 always thinks (sent without), GPT-5's least is minimal, GPT-5.1's none
    expect(effort('o3', { type: 'disabled' })).toEqual({ effort: undefined, compat: ['thinking'] })
    expect(effort('gpt-5', { type: 'disabled' }).effort).toBe('minimal')
    expect(effort('gpt-5.1', { type: 'disabled' }).effort).toBe('none')
    // output_config's effort left out, its format still translated: named as what it still became
    const oc = decode({ model: 'gpt-4o', messages: user(), output_config: { effort: 'low', format: { type: 'json_schema', schema: { type: 'object' } } } }, 'translate')
    const sent = passthroughBody(oc.body, oc.rules, GPT4O).body
    expect(sent.reasoning_effort).toBeUndefined()
    expect(sent.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' }, strict: false } })
    expect(oc.rules.compat).toEqual(['output_config->response_format'])
    // beside the client's own response_format, which stands, it is left out and named alone
    const both = decode({ model: 'gpt-4o', messages: user(), response_format: { type: 'json_object' }, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } }, 'translate')
    expect(passthroughBody(both.body, both.rules, GPT4O).body.response_format).toEqual({ type: 'json_object' })
    expect(both.rules.compat).toEqual(['output_config'])
    // beside the client's own reasoning_effort, which stands, thinking is left out and named alone
    const own = decode({ model: 'o3', messages: user(), reasoning_effort: 'low', thinking: { type: 'enabled', budget_tokens: 30_000 } }, 'translate')
    expect(passthroughBody(own.body, own.rules, at('o3')).body.reasoning_effort).toBe('low')
    expect(own.rules.compat).toEqual(['thinking'])
    // another server of the chat wire gets the effort as translated
    expect(effort('o3', { type: 'disabled' }, { id: 'o3', reasons: true, compatible: true }).effort).toBe('none')
  })
  test("stop_sequences beside the client's own stop: more than four together is a 400 before any call", () => {
    const { body, rules } = decode({ model: 'gpt-4o', messages: user(), stop: ['a', 'b'], stop_sequences: ['X', 'Y', 'Z'] }, 'translate')
    expect(() => passthroughBody(body, rules, GPT4O)).toThrow('stop_sequences: with stop, 5 stop sequences; OpenAI models take at most 4')
  })
  test('reject mode is the default behaviour of the same body', () => {
    expect(rejection({ model: 'gpt-4o', messages: user(), top_k: 3 })).toContain('top_k')
  })
})

describe('pass-through body', () => {
  test('prompt_cache_key is never forwarded; include_usage is asked for on streams', () => {
    const { body, rules } = decode({ model: 'gpt-4o', messages: user(), stream: true, prompt_cache_key: 'k', stream_options: { include_obfuscation: false } })
    const pt = passthroughBody(body, rules, GPT4O)
    expect(pt.body.prompt_cache_key).toBeUndefined()
    expect(pt.body.stream_options).toEqual({ include_obfuscation: false, include_usage: true })
    expect(pt.clientWantsUsage).toBe(false)
  })
  test('official parameters the spec does not list go upstream untouched', () => {
    const extra = { verbosity: 'low', modalities: ['text'], prediction: { type: 'content', content: 'x' }, safety_identifier: 's', logprobs: true, top_logprobs: 2 }
    const { body, rules } = decode({ model: 'gpt-4o', messages: user(), ...extra })
    expect(passthroughBody(body, rules, GPT4O).body).toMatchObject(extra)
  })
})

describe('the plan of a chat request', () => {
  const plan = (raw: Record<string, unknown>, mode: CrossFamilyMode) =>
    chatSurface.decode(raw, { model: (id: unknown, s: never) => resolveModel(catalog, id as string, s), rules: (b: never, p: never, m: { family: 'openai' | 'anthropic'; id: string }) => applyFamilyRules(b, p, m.family, mode, m.id) } as never) as { choices?: number }
  // admission holds each choice's cap: n the family rules took out (a Claude model answers once) holds one
  test("n counts for a GPT model's choices, not for a Claude model's, which answers once", async () => {
    expect((await plan({ model: 'gpt-4o', n: 16, messages: user() }, 'reject')).choices).toBe(16)
    expect((await plan({ model: 'claude-sonnet-4-5', n: 16, messages: user() }, 'translate')).choices).toBeUndefined()
  })
})
