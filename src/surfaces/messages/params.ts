// Every top-level parameter of the messages-style surface, one row each: its value rule, what it
// becomes in the IR and for a model of either family, and whether its values are the
// provider's to grow (src/routing/params.ts reads the table). A parameter not here is a 400
// naming it. What the IR has no field for is carried to a Claude-family upstream only.
import { Type as T } from '@sinclair/typebox'
import type { CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest, ReasoningEffort } from '../../ir/types.ts'
import { addCompat, carried, foreign, IGNORED, type BodyOf, type ParamTable, type RulesOutcome } from '../../routing/params.ts'
import { addStops, reasoningOf, rowsToIR, withoutRemoved } from '../../routing/to-ir.ts'
import { CLAUDE_EFFORTS, THINKING_DISPLAY } from '../../routing/owned-values.ts'
import { COUNTERPART_WIRE, drop, stopSequencesToStop, thinkingToEffort } from '../../routing/translate.ts'
import { paramSchemas } from '../checks.ts'
import { BETA_TOKEN, MAX_BETAS } from './betas.ts'
import { content, documentExtras, messages, metadataToIR, outputConfigToIR, outputFormatToIR, thinkingToIR, toolChoice, toolsToIR } from './decode.ts'
import { AnyObject, Bool, CacheControl, NonEmpty, Obj, OneOf, Opt, OrNull, Str, StrArray, type MessagesBlock, type MessagesMessage, type MessagesThinking, type MessagesTool, type MessagesToolChoice } from './schema.ts'

/** Anthropic's one structured output format (`output_format`, `output_config.format`): any other was dropped for a GPT model without a word. */
const JsonSchemaFormat = Obj(
  { type: T.Literal('json_schema', { errorMessage: 'expected "json_schema" (the one output format)' }), schema: AnyObject },
  { errorMessage: 'expected { type: "json_schema", schema }' },
)

export const PARAMS = {
  family: 'anthropic',
  rows: {
    model: { schema: NonEmpty() },
    messages: { schema: T.Array(T.Unknown(), { minItems: 1, errorMessage: 'expected a non-empty array of messages' }), ir: (v: MessagesMessage[], req, cx) => {
      req.messages = messages(v)
      if (cx.model.family === 'openai') documentExtras(v, cx.compat)
    } },
    stream: { schema: Bool(), ir: 'stream' },
    max_tokens: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer greater than 0' }), ir: 'maxTokens' },
    temperature: { schema: T.Number({ minimum: 0, maximum: 1, errorMessage: 'expected a number from 0 to 1' }), ir: 'temperature' },
    top_p: { schema: T.Number({ minimum: 0, maximum: 1, errorMessage: 'expected a number from 0 to 1' }), ir: 'topP' },
    top_k: { schema: T.Integer({ minimum: 1, errorMessage: 'expected an integer greater than 0' }), openai: foreign(drop), ir: 'topK' },
    stop_sequences: { schema: StrArray, openai: foreign(stopSequencesToStop), ir: (v: string[], req) => addStops(req, v) },
    // Claude Code sends user_id as a JSON text; any string is fine.
    metadata: { schema: Obj({ user_id: Opt(OrNull(Str(), 'expected a string')) }, { errorMessage: 'expected an object { user_id? }' }), ir: metadataToIR },
    thinking: { schema: AnyObject, openai: foreign(thinkingToEffort), owned: { display: THINKING_DISPLAY }, ir: (v: MessagesThinking, req, cx) => thinkingToIR(v, req, cx.model) },
    cache_control: { schema: CacheControl, openai: foreign(drop), ir: carried('anthropic') },
    tools: { schema: T.Array(T.Unknown(), { errorMessage: 'expected an array of tools' }), ir: (v: MessagesTool[], req, cx) => toolsToIR(v, req, cx.model, cx.compat) },
    // tool_choice: checked by the decoder (a tagged union)
    tool_choice: { ir: (v: MessagesToolChoice, req) => { req.toolChoice = toolChoice(v) } },
    parallel_tool_calls: { schema: Bool(), ir: 'parallelToolCalls' },
    pause_on_call_tools_start: { schema: Bool(), openai: IGNORED, gateway: true },
    service_tier: { schema: Str(), openai: IGNORED, ir: carried('anthropic') },
    reasoning_effort: { schema: OneOf(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']), ir: (v: ReasoningEffort, req) => { reasoningOf(req).effort = v } },
    // the same tokens as the header's (betas.ts): they go upstream in it
    betas: { schema: T.Array(Str({ pattern: BETA_TOKEN, errorMessage: 'expected a beta token (letters, digits, "-", "_" and "." only, at most 100)' }), { maxItems: MAX_BETAS, errorMessage: `expected an array of strings, at most ${MAX_BETAS} beta tokens` }), openai: IGNORED, ir: 'betas' },
    system: { schema: T.Union([Str(), T.Array(T.Unknown())], { errorMessage: 'expected a string or an array of text blocks' }), ir: (v: string | MessagesBlock[], req) => { req.system = content(v) } },
    context_management: { schema: AnyObject, openai: foreign(drop), ir: carried('anthropic') },
    output_config: { schema: Obj(
      { effort: Opt(OrNull(Str(), 'expected a string')), format: Opt(OrNull(JsonSchemaFormat, 'expected { type: "json_schema", schema }')) },
      { errorMessage: 'expected an object { effort?, format? }' },
    ), owned: { effort: CLAUDE_EFFORTS }, ir: outputConfigToIR },
    output_format: { schema: JsonSchemaFormat, ir: outputFormatToIR },
    container: { schema: T.Union([Str(), AnyObject], { errorMessage: 'expected a container id (string) or an object' }), openai: foreign(drop), ir: carried('anthropic') },
    mcp_servers: { schema: T.Array(AnyObject, { errorMessage: 'expected an array of MCP server objects' }), openai: foreign(drop), ir: carried('anthropic') },
    inference_geo: { schema: Str(), openai: foreign(drop), ir: carried('anthropic') },
    speed: { schema: Str(), openai: foreign(drop) },
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

type Obj = Record<string, unknown>

/** A checked body → IR: each parameter by its row, with the family rules' outcome applied. */
export function messagesToIR(checked: MessagesBody, model: CatalogModel, rules: RulesOutcome): GenerationRequest {
  const req = rowsToIR(withoutRemoved(checked, rules), PARAMS, model, rules)
  if (model.family === 'openai' && !model.reasoning && req.reasoning?.effort !== undefined) withoutEffort(req, checked, rules)
  return req
}

/** `thinking->reasoning_effort` → `thinking`; `output_config->reasoning_effort+response_format` → `output_config->response_format`. */
function withoutEffortNamed(entry: string): string {
  const [name, to] = entry.split('->')
  if (to === undefined) return entry
  const left = to.split('+').filter((f) => f !== COUNTERPART_WIRE.openai.reasoning)
  return left.length > 0 ? `${name}->${left.join('+')}` : name!
}

/**
 * A GPT model that does not reason (gpt-4o) refuses a reasoning effort with a 400: whatever
 * asked for one (`reasoning_effort`, or thinking and output_config translated) is left out, and
 * named as dropped rather than as translated.
 */
function withoutEffort(req: GenerationRequest, checked: MessagesBody, rules: RulesOutcome): void {
  delete req.reasoning!.effort
  if (Object.keys(req.reasoning!).length === 0) delete req.reasoning
  rules.compat.forEach((entry, i) => (rules.compat[i] = withoutEffortNamed(entry)))
  // named once, however often the request's IR is built
  if (checked.reasoning_effort !== undefined) addCompat(rules.compat, ['reasoning_effort'])
}
