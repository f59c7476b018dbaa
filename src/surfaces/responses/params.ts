// Every top-level parameter of the responses-style surface, one row each: its value rule, what it
// becomes in the IR and for a model of either family, and whether its values are the
// provider's to grow (src/routing/params.ts reads the table). A parameter not here is a 400
// naming it. The `shaped` ones become the turn first (a thread's history, one spelling of
// tools and formats; validate.ts), and the turn becomes IR (decode.ts `turnStart`).
import { Type as T } from '@sinclair/typebox'
import type { CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest } from '../../ir/types.ts'
import { foreign, IGNORED, ignoredNamedIf, type BodyOf, type IRContext, type ParamTable, type RulesOutcome } from '../../routing/params.ts'
import { carry, rowsToIR, withoutRemoved } from '../../routing/to-ir.ts'
import { CACHE_RETENTION, EFFORTS, OPENAI_TIERS, VERBOSITY } from '../../routing/owned-values.ts'
import { drop, functionCallToChoice, functionsToTools, parallelToDisable, responseFormatToStructured, userToUser } from '../../routing/translate.ts'
import { paramSchemas } from '../checks.ts'
import { AccessPrograms, ImageOptions, keepLastBreakpoints, Moderation, PromptCacheOptions, safetyIdentifierToIR } from '../openai-options.ts'
import { MCP_BETA, mcpConnector, turnStart } from './decode.ts'
import type { Turn } from './turn.ts'
import { AnyObject, Arr, Bool, Id, Int, JsonSchemaFormat, NonEmpty, Num, OneOf, SUMMARIES, Str } from './schema.ts'

/** `background: true` asks for a queued response; the gateway runs it at once instead: dropped, and said so (`false` loses nothing). */
const FOREGROUND = ignoredNamedIf((v) => v === true)

export const PARAMS = {
  family: 'openai',
  rows: {
    model: { schema: NonEmpty() },
    // input: checked by the decoder (items)
    input: { shaped: true },
    // messages: checked by the decoder (messages)
    messages: { shaped: true },
    instructions: { schema: Str(), shaped: true },
    system: { schema: Str(), shaped: true },
    tools: { schema: Arr('tools'), shaped: true },
    // tool_choice: checked by the decoder (a tagged union)
    tool_choice: { shaped: true },
    temperature: { schema: Num(0, 2), ir: 'temperature' },
    top_p: { schema: Num(0, 1), ir: 'topP' },
    max_output_tokens: { schema: Int(1), ir: 'maxTokens' },
    response_format: { schema: T.Union(
      [
        T.Object({ type: OneOf(['text', 'json_object']) }),
        T.Object({ type: T.Literal('json_schema'), json_schema: T.Object({ name: NonEmpty(), schema: T.Optional(AnyObject), strict: T.Optional(T.Union([Bool(), T.Null()])) }) }),
      ],
      { errorMessage: 'expected { type: "text" | "json_object" } or { type: "json_schema", json_schema: { name, schema?, strict? } }' },
    ), anthropic: foreign(responseFormatToStructured), shaped: true },
    reasoning_effort: { schema: Str(), owned: EFFORTS, shaped: true },
    reasoning_summary: { schema: OneOf(SUMMARIES), shaped: true },
    reasoning: { schema: T.Object(
      {
        effort: T.Optional(T.Union([Str(), T.Null()], { errorMessage: 'expected a string or null' })),
        summary: T.Optional(T.Union([OneOf(SUMMARIES), T.Null()], { errorMessage: `expected one of ${SUMMARIES.join(', ')}` })),
        generate_summary: T.Optional(T.Union([OneOf(SUMMARIES), T.Null()], { errorMessage: `expected one of ${SUMMARIES.join(', ')}` })),
      },
      { errorMessage: 'expected an object { effort?, summary? }' },
    ), owned: { effort: EFFORTS }, shaped: true },
    mcp_servers: { schema: T.Array(T.Object({ url: NonEmpty(), name: NonEmpty() }, { additionalProperties: true, errorMessage: 'expected { type: "url", url, name, authorization_token? }' }), { errorMessage: 'expected an array of MCP server objects' }), shaped: true, ir: mcpServersToIR },
    stream: { schema: Bool(), ir: 'stream' },
    web_search_options: { schema: AnyObject, anthropic: foreign(drop), shaped: true },
    prompt_cache_retention: { schema: Str(), anthropic: IGNORED, owned: CACHE_RETENTION },
    // a Claude model's thinking is sealed into encrypted_content whether asked or not: only what else is asked goes unserved
    include: { schema: T.Union([Str(), T.Array(Str())], { errorMessage: 'expected a string or an array of strings' }), anthropic: ignoredNamedIf((v) => (Array.isArray(v) ? v : [v]).some((x) => x !== 'reasoning.encrypted_content')) },
    previous_response_id: { schema: Id(), shaped: true },
    tool_outputs: { schema: Arr('tool outputs'), shaped: true },
    max_tool_calls: { schema: Int(1) },
    audio: { schema: AnyObject, anthropic: foreign(drop), openai: IGNORED },
    modalities: { schema: T.Array(Str(), { errorMessage: 'expected an array of strings' }), anthropic: foreign(drop), openai: IGNORED },
    prediction: { schema: AnyObject, anthropic: foreign(drop), openai: IGNORED },
    strict: { schema: Bool(), anthropic: IGNORED, openai: IGNORED },
    verbosity: { schema: Str(), anthropic: IGNORED, owned: VERBOSITY, shaped: true },
    metadata: { schema: T.Record(T.String(), Str({ maxLength: 512, errorMessage: 'expected a string of at most 512 characters' }), { maxProperties: 16, errorMessage: 'expected an object of at most 16 string values' }), ir: metadataToIR },
    store: { schema: Bool(), shaped: true },
    conversation: { schema: T.Union([Id(), T.Object({ id: Id() })], { errorMessage: 'expected a conversation id of 1 to 256 characters, or { id }' }), shaped: true },
    n: { schema: T.Integer({ minimum: 1, maximum: 1, errorMessage: 'only 1 is supported' }), anthropic: foreign(drop), openai: IGNORED },
    seed: { schema: T.Integer({ errorMessage: 'expected an integer' }), anthropic: foreign(drop), openai: IGNORED },
    user: { schema: Str(), anthropic: foreign(userToUser), ir: 'user' },
    logit_bias: { schema: T.Record(T.String(), T.Number(), { errorMessage: 'expected an object of token id → number' }), anthropic: foreign(drop), openai: IGNORED },
    frequency_penalty: { schema: Num(-2, 2), anthropic: foreign(drop), openai: IGNORED },
    presence_penalty: { schema: Num(-2, 2), anthropic: IGNORED, openai: IGNORED },
    functions: { schema: Arr('functions'), anthropic: foreign(functionsToTools), shaped: true },
    function_call: { schema: T.Union([OneOf(['none', 'auto']), T.Object({ name: NonEmpty() })], { errorMessage: 'expected "none", "auto" or { name }' }), anthropic: foreign(functionCallToChoice), shaped: true },
    text: { schema: T.Object(
      {
        format: T.Optional(T.Union([T.Object({ type: OneOf(['text', 'json_object']) }), JsonSchemaFormat], { errorMessage: 'expected { type: "text" | "json_object" } or { type: "json_schema", name, schema?, strict? }' })),
        // a provider-owned value set: any string here, checked where translated (`owned`)
        verbosity: T.Optional(T.Union([Str(), T.Null()], { errorMessage: 'expected a string or null' })),
      },
      { errorMessage: 'expected an object { format?, verbosity? }' },
    ), owned: { verbosity: VERBOSITY }, shaped: true },
    parallel_tool_calls: { schema: Bool(), anthropic: foreign(parallelToDisable), ir: 'parallelToolCalls' },
    prompt_cache_key: { schema: Str(), anthropic: IGNORED },
    prompt_cache_options: { schema: PromptCacheOptions, anthropic: IGNORED },
    // a moderation policy a Claude model would not apply: refused, or dropped and named
    moderation: { schema: Moderation, anthropic: foreign(drop) },
    access_programs: { schema: AccessPrograms, anthropic: IGNORED },
    image: { schema: ImageOptions, anthropic: IGNORED },
    safety_identifier: { schema: Str(), ir: safetyIdentifierToIR },
    service_tier: { schema: Str(), anthropic: IGNORED, owned: OPENAI_TIERS },
    // the Responses API's holds this one member (chat's `include_usage` is not one): anything else is named, not dropped
    stream_options: { schema: T.Object(
      { include_obfuscation: T.Optional(Bool()) },
      { additionalProperties: false, errorMessage: 'expected { include_obfuscation?: boolean }' },
    ) },
    top_logprobs: { schema: T.Integer({ minimum: 0, maximum: 20, errorMessage: 'expected an integer from 0 to 20' }), anthropic: foreign(drop) },
    // the gateway answers every response in the foreground, on either family: an upstream
    // never queues one that nothing would then collect, bill or let the client poll
    background: { schema: Bool(), openai: FOREGROUND, anthropic: FOREGROUND },
    background_options: { schema: T.Object(
      { completion_window: T.Optional(Str()), continuation_id: T.Optional(Str()) },
      { errorMessage: 'expected an object { completion_window?, continuation_id? }' },
    ), openai: IGNORED, anthropic: IGNORED },
    prompt: { schema: AnyObject, anthropic: foreign(drop) },
    // the Responses API's own (compaction); Anthropic's of the same name is another shape
    context_management: { schema: T.Array(T.Unknown(), { errorMessage: 'expected an array' }), ir: leftOut('context_management') },
    truncation: { schema: T.Union([OneOf(['auto', 'disabled']), AnyObject], { errorMessage: 'expected "auto", "disabled" or an object' }), ir: leftOut('truncation') },
    client_metadata: { schema: AnyObject, anthropic: IGNORED },
  },
} satisfies ParamTable

/** A body whose values passed the table's rules. */
export type ResponsesBody = BodyOf<typeof PARAMS>

export const PARAM_SCHEMAS = paramSchemas(PARAMS)

type Obj = Record<string, unknown>

/** Metadata has no place in a Claude-family request: left out, and said so. */
function metadataToIR(metadata: Record<string, string>, req: GenerationRequest, cx: IRContext): void {
  if (cx.model.family === 'openai') req.metadata = metadata
  else cx.compat.push('metadata')
}

/** `mcp_servers` is Anthropic's MCP connector for a Claude model (a beta of its own). */
function mcpServersToIR(servers: Obj[], req: GenerationRequest, cx: IRContext): void {
  if (cx.model.family !== 'anthropic') return
  carry(req, 'anthropic', 'mcp_servers', mcpConnector(servers))
  req.betas = [MCP_BETA]
}

/** A parameter with no form in an IR call (the upstream's own thread handling): left out, and said so. */
function leftOut(name: string) {
  return (_: unknown, _req: GenerationRequest, cx: IRContext): void => {
    cx.compat.push(name)
  }
}

/** A checked turn → IR: what the turn reshaped, then each other parameter by its row, with the family rules' outcome applied. */
export function turnToIR(checked: ResponsesBody, turn: Turn, model: CatalogModel, rules: RulesOutcome): GenerationRequest {
  return keepLastBreakpoints(rowsToIR(withoutRemoved(checked, rules), PARAMS, model, rules, turnStart(checked, turn, model, rules.compat)))
}
