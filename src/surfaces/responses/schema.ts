// Value rules of each top-level responses-style parameter (spec §4.5 plus the current
// official Responses API), as TypeBox schemas compiled once. Nested objects allow extra
// fields: an OpenAI upstream gets the body as it is, so unknown nested fields are its call.
import { Type as T, type TSchema } from '@sinclair/typebox'

const Str = (o: object = {}) => T.String({ errorMessage: 'expected a string', ...o })
const NonEmpty = () => Str({ minLength: 1, errorMessage: 'expected a non-empty string' })
const Id = () => Str({ minLength: 1, maxLength: 256, errorMessage: 'expected an id of 1 to 256 characters' })
const Bool = () => T.Boolean({ errorMessage: 'expected a boolean (true or false)' })
const Num = (min: number, max: number) => T.Number({ minimum: min, maximum: max, errorMessage: `expected a number from ${min} to ${max}` })
const Int = (min: number) => T.Integer({ minimum: min, errorMessage: `expected an integer of at least ${min}` })
const OneOf = (values: string[]) => T.Union(values.map((v) => T.Literal(v)), { errorMessage: `expected one of ${values.map((v) => `"${v}"`).join(', ')}` })
const AnyObject = T.Object({}, { additionalProperties: true, errorMessage: 'expected an object' })
const Arr = (what: string) => T.Array(T.Unknown(), { errorMessage: `expected an array of ${what}` })

export const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh']
export const SUMMARIES = ['auto', 'concise', 'detailed', 'none']

const JsonSchemaFormat = T.Object(
  { type: T.Literal('json_schema'), name: NonEmpty(), schema: T.Optional(AnyObject), strict: T.Optional(T.Union([Bool(), T.Null()])), description: T.Optional(Str()) },
  { errorMessage: 'expected { type: "json_schema", name, schema?, strict? }' },
)

export const PARAM_SCHEMAS: Record<string, TSchema> = {
  model: NonEmpty(),
  instructions: Str(),
  system: Str(),
  tools: Arr('tools'),
  temperature: Num(0, 2),
  top_p: Num(0, 1),
  max_output_tokens: Int(1),
  response_format: T.Union(
    [
      T.Object({ type: OneOf(['text', 'json_object']) }),
      T.Object({ type: T.Literal('json_schema'), json_schema: T.Object({ name: NonEmpty(), schema: T.Optional(AnyObject), strict: T.Optional(T.Union([Bool(), T.Null()])) }) }),
    ],
    { errorMessage: 'expected { type: "text" | "json_object" } or { type: "json_schema", json_schema: { name, schema?, strict? } }' },
  ),
  text: T.Object(
    {
      format: T.Optional(T.Union([T.Object({ type: OneOf(['text', 'json_object']) }), JsonSchemaFormat], { errorMessage: 'expected { type: "text" | "json_object" } or { type: "json_schema", name, schema?, strict? }' })),
      // provider-owned value sets (routing/owned-values.ts): any string here, checked where translated
      verbosity: T.Optional(T.Union([Str(), T.Null()])),
    },
    { errorMessage: 'expected an object { format?, verbosity? }' },
  ),
  reasoning_effort: Str(),
  reasoning_summary: OneOf(SUMMARIES),
  reasoning: T.Object(
    {
      effort: T.Optional(T.Union([Str(), T.Null()], { errorMessage: 'expected a string or null' })),
      summary: T.Optional(T.Union([OneOf(SUMMARIES), T.Null()], { errorMessage: `expected one of ${SUMMARIES.join(', ')}` })),
      generate_summary: T.Optional(T.Union([OneOf(SUMMARIES), T.Null()], { errorMessage: `expected one of ${SUMMARIES.join(', ')}` })),
    },
    { errorMessage: 'expected an object { effort?, summary? }' },
  ),
  mcp_servers: T.Array(T.Object({ url: NonEmpty(), name: NonEmpty() }, { additionalProperties: true, errorMessage: 'expected { type: "url", url, name, authorization_token? }' }), { errorMessage: 'expected an array of MCP server objects' }),
  stream: Bool(),
  web_search_options: AnyObject,
  prompt_cache_retention: Str(),
  include: T.Union([Str(), T.Array(Str())], { errorMessage: 'expected a string or an array of strings' }),
  previous_response_id: Id(),
  tool_outputs: Arr('tool outputs'),
  truncation: T.Union([OneOf(['auto', 'disabled']), AnyObject], { errorMessage: 'expected "auto", "disabled" or an object' }),
  max_tool_calls: Int(1),
  audio: AnyObject,
  modalities: T.Array(Str(), { errorMessage: 'expected an array of strings' }),
  prediction: AnyObject,
  strict: Bool(),
  verbosity: Str(),
  metadata: T.Record(T.String(), Str({ maxLength: 512, errorMessage: 'expected a string of at most 512 characters' }), { maxProperties: 16, errorMessage: 'expected an object of at most 16 string values' }),
  store: Bool(),
  conversation: T.Union([Id(), T.Object({ id: Id() })], { errorMessage: 'expected a conversation id of 1 to 256 characters, or { id }' }),
  n: T.Integer({ minimum: 1, maximum: 1, errorMessage: 'only 1 is supported' }),
  seed: T.Integer({ errorMessage: 'expected an integer' }),
  user: Str(),
  logit_bias: T.Record(T.String(), T.Number(), { errorMessage: 'expected an object of token id → number' }),
  frequency_penalty: Num(-2, 2),
  presence_penalty: Num(-2, 2),
  functions: Arr('functions'),
  function_call: T.Union([OneOf(['none', 'auto']), T.Object({ name: NonEmpty() })], { errorMessage: 'expected "none", "auto" or { name }' }),
  parallel_tool_calls: Bool(),
  prompt_cache_key: Str(),
  safety_identifier: Str(),
  service_tier: Str(),
  stream_options: AnyObject,
  top_logprobs: T.Integer({ minimum: 0, maximum: 20, errorMessage: 'expected an integer from 0 to 20' }),
  background: Bool(),
  prompt: AnyObject,
  context_management: T.Array(T.Unknown(), { errorMessage: 'expected an array' }),
  client_metadata: AnyObject,
}
