// The chat-style request body (the gateway's parameters and the official Chat Completions ones),
// as TypeBox schemas compiled once. Schemas are split where the wire is a tagged union
// (message role, content part type, response_format type), so decode.ts can pick the
// one schema that applies and name the exact field that is wrong.
import { Type as T, type ObjectOptions, type Static, type TProperties, type TSchema } from '@sinclair/typebox'
import { compiled, firstError } from '../checks.ts'

export { firstError }

export const Str = (o: object = {}) => T.String(o)
export const Obj = <P extends TProperties>(props: P, o: ObjectOptions = {}) => T.Object(props, o)
export const Opt = T.Optional
export const OneOf = <const V extends string>(values: readonly V[], what: string) =>
  T.Union(values.map((v) => T.Literal(v)), { errorMessage: `expected one of ${values.map((v) => `"${v}"`).join(', ')}${what}` })
export const AnyObject = T.Object({}, { additionalProperties: true, errorMessage: 'expected an object' })

export const TOOL_NAME = '^[a-zA-Z0-9_-]{1,64}$'
const ToolName = Str({ pattern: TOOL_NAME, errorMessage: 'expected a name of 1-64 characters a-z, A-Z, 0-9, _ or -' })


// A part may ask for Anthropic-style prompt caching (for a Claude-family model): any value, the upstream's to judge.
const Cache = Opt(T.Unknown())

const TextPart = Obj({ type: T.Literal('text'), text: Str({ errorMessage: 'expected a string' }), cache_control: Cache })
const ImagePart = Obj({
  type: T.Literal('image_url'),
  image_url: Obj(
    {
      url: Str({ pattern: '^(https://|data:)', errorMessage: 'expected an https:// URL or a data: URL' }),
      detail: Opt(OneOf(['auto', 'low', 'high', 'original'], '')),
    },
    { errorMessage: 'expected { url, detail? }' },
  ),
  cache_control: Cache,
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
  cache_control: Cache,
})
const RefusalPart = Obj({ type: T.Literal('refusal'), refusal: Str({ errorMessage: 'expected a string' }) })

/** Which content parts each role may carry. */
export const PARTS_BY_ROLE = {
  system: { text: TextPart },
  developer: { text: TextPart },
  user: { text: TextPart, image_url: ImagePart, input_audio: AudioPart, file: FilePart },
  assistant: { text: TextPart, refusal: RefusalPart },
  tool: { text: TextPart },
  function: {},
}

const CallId = Str({ minLength: 1, errorMessage: 'expected a non-empty string' })
/** An assistant's tool call, of a function or of a custom tool (validate.ts checks each by its `type`, to name the field). */
export const FunctionToolCall = Obj({
  id: CallId,
  type: T.Literal('function', { errorMessage: 'expected "function" or "custom"' }),
  function: Obj({ name: Str({ errorMessage: 'expected a string' }), arguments: Str({ errorMessage: 'expected a string (JSON text)' }) }, { errorMessage: 'expected { name, arguments }' }),
})
export const CustomToolCall = Obj({
  id: CallId,
  type: T.Literal('custom'),
  custom: Obj({ name: Str({ errorMessage: 'expected a string' }), input: Str({ errorMessage: 'expected a string' }) }, { errorMessage: 'expected { name, input }' }),
})
const ToolCall = T.Union([FunctionToolCall, CustomToolCall], { errorMessage: 'expected { id, type: "function", function: { name, arguments } } or { id, type: "custom", custom: { name, input } }' })

/** Message fields other than `content`, per role (content is checked part by part). */
/** A Claude thinking block as a chat reply carries it, signed (or redacted) to go back as it came. */
const ThinkingBlock = T.Union(
  [Obj({ type: T.Literal('thinking'), thinking: Str(), signature: Str() }), Obj({ type: T.Literal('redacted_thinking'), data: Str() })],
  { errorMessage: 'expected {type: "thinking", thinking, signature} or {type: "redacted_thinking", data}' },
)

export const MESSAGE_BY_ROLE = {
  system: Obj({ name: Opt(Str()) }),
  developer: Obj({ name: Opt(Str()) }),
  user: Obj({ name: Opt(Str()) }),
  assistant: Obj({
    name: Opt(Str()),
    // what the gateway gives a Claude model's thinking (as LiteLLM does): sent back, the signed blocks go back to Claude
    reasoning_content: Opt(T.Union([T.Null(), Str()], { errorMessage: 'expected a string or null' })),
    thinking_blocks: Opt(T.Array(ThinkingBlock, { errorMessage: 'expected an array of {type: "thinking", thinking, signature} or {type: "redacted_thinking", data}' })),
    tool_calls: Opt(T.Array(ToolCall, { errorMessage: 'expected an array of tool calls' })),
    function_call: Opt(T.Union([T.Null(), Obj({ name: Str(), arguments: Str() })], { errorMessage: 'expected { name, arguments } or null' })),
    refusal: Opt(T.Union([T.Null(), Str()], { errorMessage: 'expected a string or null' })),
    // an earlier audio reply, recalled by its id (OpenAI's own: decode.ts)
    audio: Opt(T.Union([T.Null(), Obj({ id: Str({ minLength: 1, errorMessage: 'expected a non-empty string' }) }, { errorMessage: 'expected { id }' })], { errorMessage: 'expected { id } or null' })),
  }),
  tool: Obj({ tool_call_id: Str({ minLength: 1, errorMessage: 'expected a non-empty string' }) }),
  function: Obj({ name: Str({ minLength: 1, errorMessage: 'expected a non-empty string' }) }),
}

export type ChatRole = keyof typeof MESSAGE_BY_ROLE
type Fields<R extends ChatRole> = Static<(typeof MESSAGE_BY_ROLE)[R]>
type StaticOf<S> = S extends TSchema ? Static<S> : never
type PartOf<R extends ChatRole> = StaticOf<(typeof PARTS_BY_ROLE)[R][keyof (typeof PARTS_BY_ROLE)[R]]>

/** A content part as validate.ts leaves it, told apart by `type`. */
export type ChatTextPart = Static<typeof TextPart>
export type ChatRefusalPart = Static<typeof RefusalPart>
export type ChatUserPart = PartOf<'user'>

/**
 * A message as validate.ts leaves it, told apart by `role`: its role's fields (MESSAGE_BY_ROLE)
 * and content of the parts its role may carry (PARTS_BY_ROLE). An assistant's content may be
 * left out beside tool calls, a function call or a refusal; a function result's is a string if
 * it is there at all.
 */
export type ChatMessage =
  | (Fields<'system'> & { role: 'system'; content: string | PartOf<'system'>[] })
  | (Fields<'developer'> & { role: 'developer'; content: string | PartOf<'developer'>[] })
  | (Fields<'user'> & { role: 'user'; content: string | ChatUserPart[] })
  | (Fields<'assistant'> & { role: 'assistant'; content?: string | PartOf<'assistant'>[] | null })
  | (Fields<'tool'> & { role: 'tool'; content: string | PartOf<'tool'>[] })
  | (Fields<'function'> & { role: 'function'; content?: string | null })

export const FunctionTool = Obj({
  type: T.Literal('function', { errorMessage: 'expected "function" or "custom"' }),
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

/** A custom tool: free-form input, held to a grammar where `format` gives one (OpenAI's to judge). */
export const CustomTool = Obj({
  type: T.Literal('custom', { errorMessage: 'expected "function" or "custom"' }),
  custom: Obj(
    { name: ToolName, description: Opt(Str({ errorMessage: 'expected a string' })), format: Opt(AnyObject) },
    { errorMessage: 'expected { name, description?, format? }' },
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

export const CustomToolChoice = Obj({
  type: T.Literal('custom'),
  custom: Obj({ name: Str({ errorMessage: 'expected a string' }) }, { errorMessage: 'expected { name }' }),
})

/** A tool named in `allowed_tools`: `{ type: "function", function: { name } }` or `{ type: "custom", custom: { name } }`. */
const AllowedTool = T.Union([ToolChoiceObject, CustomToolChoice], { errorMessage: 'expected { type: "function", function: { name } } or { type: "custom", custom: { name } }' })

export const AllowedToolsChoice = Obj({
  type: T.Literal('allowed_tools'),
  allowed_tools: Obj(
    { mode: OneOf(['auto', 'required'], ''), tools: T.Array(AllowedTool, { minItems: 1, errorMessage: 'expected a non-empty array of tools' }) },
    { errorMessage: 'expected { mode, tools }' },
  ),
})

export const FunctionCallObject = Obj({ name: Str({ errorMessage: 'expected a string' }) })

/** A tool's name, whichever its kind: of a tool in `tools`, an assistant's tool call, or a tool a choice names. */
export const toolName = (t: { type: 'function'; function: { name: string } } | { type: 'custom'; custom: { name: string } }): string =>
  t.type === 'custom' ? t.custom.name : t.function.name

/** A tool, a legacy function and a tool choice as their checks leave them. */
export type ChatTool = Static<typeof FunctionTool> | Static<typeof CustomTool>
export type ChatFunction = Static<typeof LegacyFunction>
export type ChatToolChoice = 'none' | 'auto' | 'required' | Static<typeof ToolChoiceObject> | Static<typeof CustomToolChoice> | Static<typeof AllowedToolsChoice>

export const RESPONSE_FORMATS = {
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

/** response_format as validate.ts leaves it, told apart by `type`. */
export type ChatResponseFormat = Static<(typeof RESPONSE_FORMATS)[keyof typeof RESPONSE_FORMATS]>

// Compile every schema up front so no request pays for it.
for (const s of [...Object.values(MESSAGE_BY_ROLE), ...Object.values(RESPONSE_FORMATS), FunctionTool, CustomTool, FunctionToolCall, CustomToolCall, LegacyFunction, ToolChoiceObject, CustomToolChoice, AllowedToolsChoice, FunctionCallObject])
  compiled(s)
for (const parts of Object.values(PARTS_BY_ROLE)) for (const s of Object.values(parts)) compiled(s)
