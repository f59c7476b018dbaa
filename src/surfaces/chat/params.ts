// Every top-level parameter of the chat-style surface, one row each: its value rule, what it
// becomes for a model of either family, and whether its values are the provider's to grow
// (src/routing/params.ts reads the table). A parameter not here is a 400 naming it.
import { Type as T } from '@sinclair/typebox'
import { foreign, IGNORED, partly, type BodyOf, type ParamTable } from '../../routing/params.ts'
import { CACHE_RETENTION, EFFORTS, OPENAI_TIERS, VERBOSITY } from '../../routing/owned-values.ts'
import { drop, functionCallToChoice, functionsToTools, maxCompletionToMax, outputConfigToEffort, parallelToDisable, responseFormatToStructured, stopSequencesToStop, thinkingToEffort, userToUser } from '../../routing/translate.ts'
import { paramSchemas } from '../checks.ts'
import { AnyObject, Obj, OneOf, Opt, Str } from './schema.ts'

export const PARAMS = {
  family: 'openai',
  rows: {
    model: { schema: Str({ minLength: 1 }) },
    messages: { schema: T.Array(T.Unknown(), { minItems: 1, errorMessage: 'expected a non-empty array of messages' }) },
    stream: { schema: T.Boolean({ errorMessage: 'must be a boolean (true or false)' }) },
    temperature: { schema: T.Number({ minimum: 0, maximum: 2, errorMessage: 'expected a number from 0 to 2' }), ir: 'temperature' },
    max_tokens: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }) },
    max_completion_tokens: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }), anthropic: foreign(maxCompletionToMax) },
    top_p: { schema: T.Number({ exclusiveMinimum: 0, maximum: 1, errorMessage: 'expected a number greater than 0 and at most 1' }), ir: 'topP' },
    stop: { schema: T.Union([Str(), T.Array(Str(), { maxItems: 64 })], { errorMessage: 'expected a string or an array of strings' }) },
    frequency_penalty: { schema: T.Number({ minimum: -2, maximum: 2, errorMessage: 'expected a number from -2 to 2' }), anthropic: foreign(drop) },
    presence_penalty: { schema: T.Number({ minimum: -2, maximum: 2, errorMessage: 'expected a number from -2 to 2' }), anthropic: IGNORED },
    // response_format: checked by the decoder (a tagged union)
    response_format: { anthropic: foreign(responseFormatToStructured) },
    // a provider-owned value set: any string here, checked where translated (`owned`)
    reasoning_effort: { schema: Str({ errorMessage: 'expected a string' }), owned: EFFORTS },
    tools: { schema: T.Array(T.Unknown(), { errorMessage: 'expected an array of tools' }) },
    // tool_choice: checked by the decoder (a tagged union)
    tool_choice: {},
    // function_call: checked by the decoder
    function_call: { anthropic: foreign(functionCallToChoice) },
    // functions: checked by the decoder
    functions: { anthropic: foreign(functionsToTools) },
    n: { schema: T.Integer({ minimum: 1, maximum: 128, errorMessage: 'expected an integer from 1 to 128' }), anthropic: foreign(drop) },
    seed: { schema: T.Integer({ errorMessage: 'expected an integer' }), anthropic: foreign(drop) },
    user: { schema: Str({ errorMessage: 'expected a string' }), anthropic: foreign(userToUser) },
    logit_bias: { schema: T.Record(Str(), T.Number({ minimum: -100, maximum: 100 }), { errorMessage: 'expected an object of token id → number from -100 to 100' }), anthropic: foreign(drop) },
    parallel_tool_calls: { schema: T.Boolean({ errorMessage: 'expected a boolean' }), anthropic: foreign(parallelToDisable) },
    service_tier: { schema: Str({ errorMessage: 'expected a string' }), anthropic: IGNORED, owned: OPENAI_TIERS },
    store: { schema: T.Boolean({ errorMessage: 'expected a boolean' }), anthropic: foreign(drop) },
    metadata: { schema: T.Record(Str(), Str({ maxLength: 512 }), { errorMessage: 'expected an object of string values' }), anthropic: partly((v) => typeof v === 'object' && v !== null && Object.keys(v).some((k) => k !== 'user_id')) },
    stream_options: { schema: Obj(
      { include_usage: Opt(T.Boolean({ errorMessage: 'expected a boolean' })), include_obfuscation: Opt(T.Boolean({ errorMessage: 'expected a boolean' })) },
      { additionalProperties: false, errorMessage: 'expected { include_usage?: boolean, include_obfuscation?: boolean }' },
    ) },
    web_search_options: { schema: AnyObject, anthropic: foreign(drop) },
    prompt_cache_key: { schema: Str({ errorMessage: 'expected a string' }), openai: IGNORED, anthropic: IGNORED },
    modalities: { schema: T.Array(OneOf(['text', 'audio'], ''), { errorMessage: 'expected an array of "text" / "audio"' }), anthropic: foreign(drop) },
    audio: { schema: Obj({ voice: T.Union([Str(), AnyObject]), format: Str() }, { errorMessage: 'expected { voice, format }' }), anthropic: foreign(drop) },
    prediction: { schema: Obj({ type: T.Literal('content'), content: T.Union([Str(), T.Array(T.Unknown())]) }, { errorMessage: 'expected { type: "content", content }' }), anthropic: foreign(drop) },
    verbosity: { schema: Str({ errorMessage: 'expected a string' }), anthropic: IGNORED, owned: VERBOSITY },
    logprobs: { schema: T.Boolean({ errorMessage: 'expected a boolean' }), anthropic: foreign(drop) },
    top_logprobs: { schema: T.Integer({ minimum: 0, maximum: 20, errorMessage: 'expected an integer from 0 to 20' }), anthropic: foreign(drop) },
    safety_identifier: { schema: Str({ errorMessage: 'expected a string' }), anthropic: IGNORED },
    prompt_cache_retention: { schema: Str({ errorMessage: 'expected a string' }), anthropic: IGNORED, owned: CACHE_RETENTION },
    // Anthropic-style extensions, honoured for Claude-family models only (their `openai` rule).
    top_k: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }), openai: foreign(drop), ir: 'topK' },
    stop_sequences: { schema: T.Array(Str(), { errorMessage: 'expected an array of strings' }), openai: foreign(stopSequencesToStop) },
    cache_control: { schema: Obj({ type: T.Literal('ephemeral') }, { errorMessage: 'expected { type: "ephemeral", ttl? }' }), openai: foreign(drop) },
    thinking: { schema: Obj(
      { type: OneOf(['enabled', 'disabled', 'adaptive'], ''), budget_tokens: Opt(T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' })) },
      { errorMessage: 'expected { type, budget_tokens? }' },
    ), openai: foreign(thinkingToEffort) },
    output_config: { schema: AnyObject, openai: foreign(outputConfigToEffort) },
    context_management: { openai: foreign(drop) },
    container: { openai: foreign(drop) },
    mcp_servers: { openai: foreign(drop) },
    inference_geo: { openai: foreign(drop) },
  },
} satisfies ParamTable

/** A body whose values passed the table's rules. */
export type ChatBody = BodyOf<typeof PARAMS>

export const PARAM_SCHEMAS = paramSchemas(PARAMS)
