// The chat-style request body (spec §4.4 plus the official Chat Completions parameters),
// as TypeBox schemas compiled once. Schemas are split where the wire is a tagged union
// (message role, content part type, response_format type), so decode.ts can pick the
// one schema that applies and name the exact field that is wrong.
import { Type as T, type TSchema } from '@sinclair/typebox'
import { compiled, firstError } from '../checks.ts'

export { firstError }

const Str = (o: object = {}) => T.String(o)
const Obj = (props: Record<string, TSchema>, o: object = {}) => T.Object(props, o)
const Opt = T.Optional
const OneOf = (values: string[], what: string) =>
  T.Union(values.map((v) => T.Literal(v)), { errorMessage: `expected one of ${values.map((v) => `"${v}"`).join(', ')}${what}` })
const AnyObject = T.Object({}, { additionalProperties: true, errorMessage: 'expected an object' })

export const TOOL_NAME = '^[a-zA-Z0-9_-]{1,64}$'
const ToolName = Str({ pattern: TOOL_NAME, errorMessage: 'expected a name of 1-64 characters a-z, A-Z, 0-9, _ or -' })

/** Value rules of each top-level parameter; model-dependent limits are checked in decode.ts. */
export const PARAM_SCHEMAS: Record<string, TSchema> = {
  model: Str({ minLength: 1 }),
  messages: T.Array(T.Unknown(), { minItems: 1, errorMessage: 'expected a non-empty array of messages' }),
  stream: T.Boolean({ errorMessage: 'must be a boolean (true or false)' }),
  temperature: T.Number({ minimum: 0, maximum: 2, errorMessage: 'expected a number from 0 to 2' }),
  max_tokens: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }),
  max_completion_tokens: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }),
  top_p: T.Number({ exclusiveMinimum: 0, maximum: 1, errorMessage: 'expected a number greater than 0 and at most 1' }),
  stop: T.Union([Str(), T.Array(Str(), { maxItems: 64 })], { errorMessage: 'expected a string or an array of strings' }),
  frequency_penalty: T.Number({ minimum: -2, maximum: 2, errorMessage: 'expected a number from -2 to 2' }),
  presence_penalty: T.Number({ minimum: -2, maximum: 2, errorMessage: 'expected a number from -2 to 2' }),
  // provider-owned value sets (routing/owned-values.ts): any string here, checked where translated
  reasoning_effort: Str({ errorMessage: 'expected a string' }),
  tools: T.Array(T.Unknown(), { errorMessage: 'expected an array of tools' }),
  n: T.Integer({ minimum: 1, maximum: 128, errorMessage: 'expected an integer from 1 to 128' }),
  seed: T.Integer({ errorMessage: 'expected an integer' }),
  user: Str({ errorMessage: 'expected a string' }),
  logit_bias: T.Record(Str(), T.Number({ minimum: -100, maximum: 100 }), { errorMessage: 'expected an object of token id → number from -100 to 100' }),
  parallel_tool_calls: T.Boolean({ errorMessage: 'expected a boolean' }),
  service_tier: Str({ errorMessage: 'expected a string' }),
  store: T.Boolean({ errorMessage: 'expected a boolean' }),
  metadata: T.Record(Str(), Str({ maxLength: 512 }), { errorMessage: 'expected an object of string values' }),
  stream_options: Obj(
    { include_usage: Opt(T.Boolean({ errorMessage: 'expected a boolean' })), include_obfuscation: Opt(T.Boolean({ errorMessage: 'expected a boolean' })) },
    { additionalProperties: false, errorMessage: 'expected { include_usage?: boolean, include_obfuscation?: boolean }' },
  ),
  web_search_options: AnyObject,
  prompt_cache_key: Str({ errorMessage: 'expected a string' }),
  modalities: T.Array(OneOf(['text', 'audio'], ''), { errorMessage: 'expected an array of "text" / "audio"' }),
  audio: Obj({ voice: T.Union([Str(), AnyObject]), format: Str() }, { errorMessage: 'expected { voice, format }' }),
  prediction: Obj({ type: T.Literal('content'), content: T.Union([Str(), T.Array(T.Unknown())]) }, { errorMessage: 'expected { type: "content", content }' }),
  verbosity: Str({ errorMessage: 'expected a string' }),
  logprobs: T.Boolean({ errorMessage: 'expected a boolean' }),
  top_logprobs: T.Integer({ minimum: 0, maximum: 20, errorMessage: 'expected an integer from 0 to 20' }),
  safety_identifier: Str({ errorMessage: 'expected a string' }),
  prompt_cache_retention: Str({ errorMessage: 'expected a string' }),
  // Anthropic-style extensions, honoured for Claude-family models only (rules.ts).
  top_k: T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' }),
  stop_sequences: T.Array(Str(), { errorMessage: 'expected an array of strings' }),
  cache_control: Obj({ type: T.Literal('ephemeral') }, { errorMessage: 'expected { type: "ephemeral", ttl? }' }),
  thinking: Obj(
    { type: OneOf(['enabled', 'disabled', 'adaptive'], ''), budget_tokens: Opt(T.Integer({ minimum: 1, errorMessage: 'expected an integer of at least 1' })) },
    { errorMessage: 'expected { type, budget_tokens? }' },
  ),
  output_config: AnyObject,
}

const TextPart = Obj({ type: T.Literal('text'), text: Str({ errorMessage: 'expected a string' }) })
const ImagePart = Obj({
  type: T.Literal('image_url'),
  image_url: Obj(
    {
      url: Str({ pattern: '^(https://|data:)', errorMessage: 'expected an https:// URL or a data: URL' }),
      detail: Opt(OneOf(['auto', 'low', 'high'], '')),
    },
    { errorMessage: 'expected { url, detail? }' },
  ),
})
const AudioPart = Obj({
  type: T.Literal('input_audio'),
  input_audio: Obj({ data: Str(), format: OneOf(['wav', 'mp3'], '') }, { errorMessage: 'expected { data, format }' }),
})
const FilePart = Obj({
  type: T.Literal('file'),
  file: Obj(
    { file_data: Opt(Str({ errorMessage: 'expected a string' })), file_id: Opt(Str({ errorMessage: 'expected a string' })), filename: Opt(Str({ errorMessage: 'expected a string' })) },
    { errorMessage: 'expected { file_data?, file_id?, filename? }' },
  ),
})
const RefusalPart = Obj({ type: T.Literal('refusal'), refusal: Str({ errorMessage: 'expected a string' }) })

/** Which content parts each role may carry. */
export const PARTS_BY_ROLE: Record<string, Record<string, TSchema>> = {
  system: { text: TextPart },
  developer: { text: TextPart },
  user: { text: TextPart, image_url: ImagePart, input_audio: AudioPart, file: FilePart },
  assistant: { text: TextPart, refusal: RefusalPart },
  tool: { text: TextPart },
  function: {},
}

const ToolCall = Obj({
  id: Str({ minLength: 1, errorMessage: 'expected a non-empty string' }),
  type: T.Literal('function', { errorMessage: 'expected "function"' }),
  function: Obj({ name: Str({ errorMessage: 'expected a string' }), arguments: Str({ errorMessage: 'expected a string (JSON text)' }) }, { errorMessage: 'expected { name, arguments }' }),
})

/** Message fields other than `content`, per role (content is checked part by part). */
export const MESSAGE_BY_ROLE: Record<string, TSchema> = {
  system: Obj({ name: Opt(Str()) }),
  developer: Obj({ name: Opt(Str()) }),
  user: Obj({ name: Opt(Str()) }),
  assistant: Obj({
    name: Opt(Str()),
    tool_calls: Opt(T.Array(ToolCall, { errorMessage: 'expected an array of tool calls' })),
    function_call: Opt(T.Union([T.Null(), Obj({ name: Str(), arguments: Str() })], { errorMessage: 'expected { name, arguments } or null' })),
    refusal: Opt(T.Union([T.Null(), Str()], { errorMessage: 'expected a string or null' })),
  }),
  tool: Obj({ tool_call_id: Str({ minLength: 1, errorMessage: 'expected a non-empty string' }) }),
  function: Obj({ name: Str({ minLength: 1, errorMessage: 'expected a non-empty string' }) }),
}

export const FunctionTool = Obj({
  type: T.Literal('function', { errorMessage: 'expected "function" (the only tool type this gateway accepts)' }),
  function: Obj(
    {
      name: ToolName,
      description: Opt(Str({ errorMessage: 'expected a string' })),
      parameters: Opt(T.Object({}, { additionalProperties: true, errorMessage: 'expected a JSON Schema object' })),
      strict: Opt(T.Union([T.Boolean(), T.Null()], { errorMessage: 'expected a boolean' })),
    },
    { errorMessage: 'expected { name, description?, parameters?, strict? }' },
  ),
})

export const LegacyFunction = Obj({
  name: ToolName,
  description: Opt(Str({ errorMessage: 'expected a string' })),
  parameters: Opt(T.Object({}, { additionalProperties: true, errorMessage: 'expected a JSON Schema object' })),
})

export const ToolChoiceObject = Obj({
  type: T.Literal('function', { errorMessage: 'expected "function"' }),
  function: Obj({ name: Str({ errorMessage: 'expected a string' }) }, { errorMessage: 'expected { name }' }),
})

export const FunctionCallObject = Obj({ name: Str({ errorMessage: 'expected a string' }) })

export const RESPONSE_FORMATS: Record<string, TSchema> = {
  text: Obj({ type: T.Literal('text') }),
  json_object: Obj({ type: T.Literal('json_object') }),
  json_schema: Obj({
    type: T.Literal('json_schema'),
    json_schema: Obj(
      {
        name: Str({ pattern: TOOL_NAME, errorMessage: 'expected a string of 1-64 characters a-z, A-Z, 0-9, _ or -' }),
        description: Opt(Str({ errorMessage: 'expected a string' })),
        schema: Opt(T.Object({}, { additionalProperties: true, errorMessage: 'expected a JSON Schema object' })),
        strict: Opt(T.Union([T.Boolean(), T.Null()], { errorMessage: 'expected a boolean' })),
      },
      { errorMessage: 'expected { name, schema?, strict? }' },
    ),
  }),
}

// Compile every schema up front so no request pays for it.
for (const s of [...Object.values(PARAM_SCHEMAS), ...Object.values(MESSAGE_BY_ROLE), ...Object.values(RESPONSE_FORMATS), FunctionTool, LegacyFunction, ToolChoiceObject, FunctionCallObject])
  compiled(s)
for (const parts of Object.values(PARTS_BY_ROLE)) for (const s of Object.values(parts)) compiled(s)
