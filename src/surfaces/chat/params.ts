// Every top-level parameter of the chat-style surface, one row each: its value rule, what it
// becomes in the IR and for a model of either family, and whether its values are the
// provider's to grow (src/routing/params.ts reads the table). A parameter not here is a 400
// naming it. OpenAI's parameters with no IR field are carried to an OpenAI-family upstream,
// the Anthropic-style extensions to a Claude-family one. `prompt_cache_key` and
// `prompt_cache_options` are never forwarded: prompt-cache scoping is the gateway's own, and a
// client's key would let it share or probe cache entries across tenants upstream.
import { Type as T } from '@sinclair/typebox'
import type { CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest, ReasoningEffort } from '../../ir/types.ts'
import { carried, foreign, IGNORED, partly, type BodyOf, type ParamTable, type RulesOutcome } from '../../routing/params.ts'
import { addStops, reasoningOf, rowsToIR, withoutRemoved } from '../../routing/to-ir.ts'
import { CACHE_RETENTION, EFFORTS, OPENAI_TIERS, VERBOSITY } from '../../routing/owned-values.ts'
import { drop, functionCallToChoice, functionsToTools, maxCompletionToMax, outputConfigToOpenAI, parallelToDisable, responseFormatToStructured, stopSequencesToStop, thinkingToEffort, userToUser } from '../../routing/translate.ts'
import { paramSchemas } from '../checks.ts'
import { keepLastBreakpoints, Moderation, PromptCacheOptions, safetyIdentifierToIR, webSearchOptionsToIR } from '../openai-options.ts'
import { functionsToIR, messagesToIR, streamToIR, thinkingToIR, toolChoiceOf, toolChoiceToIR, toolsToIR, toResponseFormat, toStops } from './decode.ts'
import { AnyObject, type ChatMessage, type ChatResponseFormat, Obj, OneOf, Opt, Str } from './schema.ts'

export const PARAMS = {
  family: 'openai',
  rows: {
    model: { schema: Str({ minLength: 1 }) },
    messages: { schema: T.Array(T.Unknown(), { minItems: 1, errorMessage: 'expected a non-empty array of messages' }), ir: (v: ChatMessage[], req, cx) => messagesToIR(v, req, cx.model) },
    stream: { schema: T.Boolean({ errorMessage: 'must be a boolean (true or false)' }), ir: (v: boolean, req, cx) => streamToIR(v, req, cx.body) },
    temperature: { schema: T.Number({ minimum: 0, maximum: 2, errorMessage: 'expected a number from 0 to 2' }), ir: 'temperature' },
    max_tokens: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }), ir: 'maxTokens' },
    max_completion_tokens: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }), anthropic: foreign(maxCompletionToMax), ir: 'maxTokens' },
    top_p: { schema: T.Number({ exclusiveMinimum: 0, maximum: 1, errorMessage: 'expected a number greater than 0 and at most 1' }), ir: 'topP' },
    stop: { schema: T.Union([Str(), T.Array(Str(), { maxItems: 64 })], { errorMessage: 'expected a string or an array of at most 64 strings' }), ir: (v: string | string[], req) => addStops(req, toStops(v)) },
    frequency_penalty: { schema: T.Number({ minimum: -2, maximum: 2, errorMessage: 'expected a number from -2 to 2' }), anthropic: foreign(drop), ir: carried('openai') },
    presence_penalty: { schema: T.Number({ minimum: -2, maximum: 2, errorMessage: 'expected a number from -2 to 2' }), anthropic: IGNORED, ir: carried('openai') },
    // response_format: checked by the decoder (a tagged union)
    response_format: { anthropic: foreign(responseFormatToStructured), ir: (v: ChatResponseFormat, req) => { req.responseFormat = toResponseFormat(v) } },
    // a provider-owned value set: any string here, checked where translated (`owned`)
    reasoning_effort: { schema: Str({ errorMessage: 'expected a string' }), owned: EFFORTS, ir: (v: ReasoningEffort, req) => { reasoningOf(req).effort = v } },
    tools: { schema: T.Array(T.Unknown(), { errorMessage: 'expected an array of tools' }), ir: toolsToIR },
    // tool_choice: checked by the decoder (a tagged union)
    tool_choice: { ir: toolChoiceToIR },
    // function_call: checked by the decoder
    function_call: { anthropic: foreign(functionCallToChoice), ir: (v: 'none' | 'auto' | { name: string }, req) => { req.toolChoice ??= toolChoiceOf(v) } },
    // functions: checked by the decoder
    functions: { anthropic: foreign(functionsToTools), ir: functionsToIR },
    n: { schema: T.Integer({ minimum: 1, maximum: 128, errorMessage: 'expected an integer from 1 to 128' }), anthropic: foreign(drop), ir: carried('openai') },
    seed: { schema: T.Integer({ errorMessage: 'expected an integer' }), anthropic: foreign(drop), ir: carried('openai') },
    user: { schema: Str({ errorMessage: 'expected a string' }), anthropic: foreign(userToUser), ir: 'user' },
    // OpenAI takes 300 entries; a server of its wire (vLLM, llama.cpp) may take more, though not a body's worth
    logit_bias: { schema: T.Record(Str(), T.Number({ minimum: -100, maximum: 100 }), { maxProperties: 1024, errorMessage: 'expected an object of at most 1024 token ids → a number from -100 to 100' }), anthropic: foreign(drop), ir: carried('openai') },
    parallel_tool_calls: { schema: T.Boolean({ errorMessage: 'expected a boolean' }), anthropic: foreign(parallelToDisable), ir: 'parallelToolCalls' },
    service_tier: { schema: Str({ errorMessage: 'expected a string' }), anthropic: IGNORED, owned: OPENAI_TIERS, ir: carried('openai') },
    store: { schema: T.Boolean({ errorMessage: 'expected a boolean' }), anthropic: foreign(drop), ir: carried('openai') },
    metadata: { schema: T.Record(Str({ maxLength: 64 }), Str({ maxLength: 512 }), { maxProperties: 16, errorMessage: 'expected an object of at most 16 keys of at most 64 characters, each a string of at most 512' }), anthropic: partly((v) => typeof v === 'object' && v !== null && Object.keys(v).some((k) => k !== 'user_id')), ir: 'metadata' },
    stream_options: { schema: Obj(
      { include_usage: Opt(T.Boolean({ errorMessage: 'expected a boolean' })), include_obfuscation: Opt(T.Boolean({ errorMessage: 'expected a boolean' })) },
      { additionalProperties: false, errorMessage: 'expected { include_usage?: boolean, include_obfuscation?: boolean }' },
    ) },
    // a Claude model's web search tool (openai-options.ts)
    web_search_options: { schema: AnyObject, ir: webSearchOptionsToIR },
    prompt_cache_key: { schema: Str({ errorMessage: 'expected a string' }), openai: IGNORED, anthropic: IGNORED },
    prompt_cache_options: { schema: PromptCacheOptions, openai: IGNORED, anthropic: IGNORED },
    // a moderation policy a Claude model would not apply: refused, or dropped and named
    moderation: { schema: Moderation, anthropic: foreign(drop), ir: carried('openai') },
    modalities: { schema: T.Array(OneOf(['text', 'audio'], ''), { errorMessage: 'expected an array of "text" / "audio"' }), anthropic: foreign(drop), ir: carried('openai') },
    audio: { schema: Obj({ voice: T.Union([Str(), AnyObject]), format: Str() }, { errorMessage: 'expected { voice, format }' }), anthropic: foreign(drop), ir: carried('openai') },
    prediction: { schema: Obj({ type: T.Literal('content'), content: T.Union([Str(), T.Array(T.Unknown())]) }, { errorMessage: 'expected { type: "content", content }' }), anthropic: foreign(drop), ir: carried('openai') },
    verbosity: { schema: Str({ errorMessage: 'expected a string' }), anthropic: IGNORED, owned: VERBOSITY, ir: carried('openai') },
    logprobs: { schema: T.Boolean({ errorMessage: 'expected a boolean' }), anthropic: foreign(drop), ir: carried('openai') },
    top_logprobs: { schema: T.Integer({ minimum: 0, maximum: 20, errorMessage: 'expected an integer from 0 to 20' }), anthropic: foreign(drop), ir: carried('openai') },
    safety_identifier: { schema: Str({ errorMessage: 'expected a string' }), ir: safetyIdentifierToIR },
    prompt_cache_retention: { schema: Str({ errorMessage: 'expected a string' }), anthropic: IGNORED, owned: CACHE_RETENTION, ir: carried('openai') },
    // Anthropic-style extensions, honoured for Claude-family models only (their `openai` rule).
    top_k: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }), openai: foreign(drop), ir: 'topK' },
    stop_sequences: { schema: T.Array(Str(), { errorMessage: 'expected an array of strings' }), openai: foreign(stopSequencesToStop), ir: (v: string[], req) => addStops(req, v) },
    cache_control: { schema: Obj({ type: T.Literal('ephemeral') }, { errorMessage: 'expected { type: "ephemeral", ttl? }' }), openai: foreign(drop), ir: carried('anthropic') },
    thinking: { schema: Obj(
      { type: OneOf(['enabled', 'disabled', 'adaptive'], ''), budget_tokens: Opt(T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' })) },
      { errorMessage: 'expected { type, budget_tokens? }' },
    ), openai: foreign(thinkingToEffort), ir: (v: { type: string; budget_tokens?: number }, req, cx) => thinkingToIR(v, req, cx.model) },
    output_config: { schema: AnyObject, openai: foreign(outputConfigToOpenAI), ir: carried('anthropic') },
    context_management: { openai: foreign(drop), ir: carried('anthropic') },
    container: { schema: T.Union([Str(), AnyObject], { errorMessage: 'expected a container id (string) or an object' }), openai: foreign(drop), ir: carried('anthropic') },
    mcp_servers: { openai: foreign(drop), ir: carried('anthropic') },
    inference_geo: { schema: Str(), openai: foreign(drop), ir: carried('anthropic') },
  },
} satisfies ParamTable

/** A body whose values passed the table's rules. */
export type ChatBody = BodyOf<typeof PARAMS>

export const PARAM_SCHEMAS = paramSchemas(PARAMS)

/**
 * A checked body → IR: each parameter by its row, with the family rules' outcome applied
 * (removed parameters gone, their counterparts merged).
 */
export function toIR(checked: ChatBody, model: CatalogModel, rules: RulesOutcome): GenerationRequest {
  return keepLastBreakpoints(rowsToIR(withoutRemoved(checked, rules), PARAMS, model, rules))
}
