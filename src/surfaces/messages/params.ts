// Every top-level parameter of the messages-style surface, one row each: its value rule, what it
// becomes for a model of either family, and whether its values are the provider's to grow
// (src/routing/params.ts reads the table). A parameter not here is a 400 naming it.
import { Type as T } from '@sinclair/typebox'
import { foreign, IGNORED, type BodyOf, type ParamTable } from '../../routing/params.ts'
import { CLAUDE_EFFORTS, THINKING_DISPLAY } from '../../routing/owned-values.ts'
import { drop, outputConfigToEffort, stopSequencesToStop, thinkingToEffort } from '../../routing/translate.ts'
import { paramSchemas } from '../checks.ts'
import { AnyObject, Bool, CacheControl, NonEmpty, Obj, OneOf, Opt, OrNull, Str, StrArray } from './schema.ts'

export const PARAMS = {
  family: 'anthropic',
  rows: {
    model: { schema: NonEmpty() },
    messages: { schema: T.Array(T.Unknown(), { minItems: 1, errorMessage: 'expected a non-empty array of messages' }) },
    stream: { schema: Bool() },
    max_tokens: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer greater than 0' }) },
    temperature: { schema: T.Number({ minimum: 0, maximum: 1, errorMessage: 'expected a number from 0 to 1' }), ir: 'temperature' },
    top_p: { schema: T.Number({ minimum: 0, maximum: 1, errorMessage: 'expected a number from 0 to 1' }), ir: 'topP' },
    top_k: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer greater than 0' }), openai: foreign(drop), ir: 'topK' },
    stop_sequences: { schema: StrArray, openai: foreign(stopSequencesToStop) },
    // Claude Code sends user_id as a JSON text; any string is fine.
    metadata: { schema: Obj({ user_id: Opt(OrNull(Str(), 'expected a string')) }, { errorMessage: 'expected an object { user_id? }' }) },
    thinking: { schema: AnyObject, openai: foreign(thinkingToEffort), owned: { display: THINKING_DISPLAY } },
    cache_control: { schema: CacheControl, openai: foreign(drop) },
    tools: { schema: T.Array(T.Unknown(), { errorMessage: 'expected an array of tools' }) },
    // tool_choice: checked by the decoder (a tagged union)
    tool_choice: {},
    parallel_tool_calls: { schema: Bool() },
    pause_on_call_tools_start: { schema: Bool(), openai: IGNORED, gateway: true },
    service_tier: { schema: Str(), openai: IGNORED },
    reasoning_effort: { schema: OneOf(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']) },
    betas: { schema: StrArray, openai: IGNORED },
    system: { schema: T.Union([Str(), T.Array(T.Unknown())], { errorMessage: 'expected a string or an array of text blocks' }) },
    context_management: { schema: AnyObject, openai: foreign(drop) },
    output_config: { schema: Obj(
      { effort: Opt(OrNull(Str(), 'expected a string')), format: Opt(OrNull(AnyObject, 'expected an object')) },
      { errorMessage: 'expected an object { effort?, format? }' },
    ), openai: foreign(outputConfigToEffort), owned: { effort: CLAUDE_EFFORTS } },
    output_format: { schema: AnyObject },
    container: { schema: T.Union([Str(), AnyObject], { errorMessage: 'expected a container id (string) or an object' }), openai: foreign(drop) },
    mcp_servers: { schema: T.Array(AnyObject, { errorMessage: 'expected an array of MCP server objects' }), openai: foreign(drop) },
    inference_geo: { schema: Str(), openai: foreign(drop) },
    speed: { openai: foreign(drop) },
    diagnostics: { openai: foreign(drop) },
    user_profile_id: { openai: foreign(drop) },
    workspace_id: { openai: foreign(drop) },
    billing_policy: { openai: foreign(drop) },
    compaction: { openai: foreign(drop) },
    fallbacks: { openai: foreign(drop) },
    fallback_credit_token: { openai: foreign(drop) },
    thread: { openai: foreign(drop) },
  },
} satisfies ParamTable

/** A body whose values passed the table's rules. */
export type MessagesBody = BodyOf<typeof PARAMS>

export const PARAM_SCHEMAS = paramSchemas(PARAMS)
