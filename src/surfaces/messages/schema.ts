// The messages-style request body (the gateway's parameters and the official Messages API's), as
// TypeBox schemas compiled once. Tagged unions (message role, block type, media source
// type, thinking type, tool_choice type) are split into one schema per tag, so validate.ts
// picks the one that applies and names the exact field that is wrong. Objects allow extra
// fields: the official API grows them often, and a Claude-family upstream gets the body
// as it is, so unknown *nested* fields are the upstream's to judge.
import { Type as T, type ObjectOptions, type Static, type TProperties, type TSchema } from '@sinclair/typebox'
import { firstError } from '../checks.ts'
import { IMAGE_TYPES } from '../../media/inline.ts'

export { firstError }

export const Str = (o: object = {}) => T.String({ errorMessage: 'expected a string', ...o })
export const NonEmpty = () => Str({ minLength: 1, errorMessage: 'expected a non-empty string' })
export const Bool = () => T.Boolean({ errorMessage: 'expected a boolean (true or false)' })
export const Obj = <P extends TProperties>(props: P, o: ObjectOptions = {}) => T.Object(props, o)
export const Opt = T.Optional
export const OrNull = <S extends TSchema>(s: S, what: string) => T.Union([s, T.Null()], { errorMessage: `${what} or null` })
export const OneOf = (values: string[]) => T.Union(values.map((v) => T.Literal(v)), { errorMessage: `expected one of ${values.map((v) => `"${v}"`).join(', ')}` })
export const AnyObject = T.Object({}, { additionalProperties: true, errorMessage: 'expected an object' })
export const StrArray = T.Array(Str(), { errorMessage: 'expected an array of strings' })

export const CacheControl = Obj(
  { type: T.Literal('ephemeral', { errorMessage: 'expected "ephemeral"' }), ttl: Opt(OneOf(['5m', '1h'])) },
  { errorMessage: 'expected { type: "ephemeral", ttl? }' },
)
const Cache = Opt(OrNull(CacheControl, 'expected { type: "ephemeral", ttl? }'))


/** Media sources per block type, by `source.type`: what an image or a document block may name. */
export const SOURCES: Record<'image' | 'document', Record<string, TSchema>> = {
  image: {
    // what Anthropic's API takes, here for both families: another went to a GPT model unchecked
    base64: Obj({ type: T.Literal('base64'), media_type: OneOf([...IMAGE_TYPES]), data: NonEmpty() }),
    url: Obj({ type: T.Literal('url'), url: NonEmpty() }),
    file: Obj({ type: T.Literal('file'), file_id: NonEmpty() }),
  },
  document: {
    base64: Obj({ type: T.Literal('base64'), media_type: T.Literal('application/pdf', { errorMessage: 'expected "application/pdf" (a text document is a text source)' }), data: NonEmpty() }),
    url: Obj({ type: T.Literal('url'), url: NonEmpty() }),
    text: Obj({ type: T.Literal('text'), media_type: T.Literal('text/plain', { errorMessage: 'expected "text/plain"' }), data: Str() }),
    file: Obj({ type: T.Literal('file'), file_id: NonEmpty() }),
    // Official: a document made of content blocks (custom citations).
    content: Obj({ type: T.Literal('content'), content: T.Union([Str(), T.Array(T.Unknown())], { errorMessage: 'expected a string or an array of blocks' }) }),
  },
}

/** Citations a text block carries back (an assistant's earlier answer); a model that cannot cite reads the text alone. */
const TextCitations = Opt(OrNull(T.Array(AnyObject, { errorMessage: 'expected an array of citation objects' }), 'expected an array of citation objects'))
/** Whether a document or search result may be cited (a GPT model cannot, which is named, not refused). */
const CitationsSetting = Opt(OrNull(Obj({ enabled: Opt(Bool()) }, { errorMessage: 'expected { enabled? }' }), 'expected { enabled? }'))

export const TextBlock = Obj({ type: T.Literal('text'), text: Str(), citations: TextCitations, cache_control: Cache })
const ImageBlock = Obj({ type: T.Literal('image'), source: AnyObject, cache_control: Cache })
const DocumentBlock = Obj({
  type: T.Literal('document'),
  source: AnyObject,
  title: Opt(OrNull(Str(), 'expected a string')),
  context: Opt(OrNull(Str(), 'expected a string')),
  citations: CitationsSetting,
  cache_control: Cache,
})
const ToolUseBlock = Obj({ type: T.Literal('tool_use'), id: NonEmpty(), name: NonEmpty(), input: AnyObject, cache_control: Cache })
const ToolResultBlock = Obj({
  type: T.Literal('tool_result'),
  tool_use_id: NonEmpty(),
  content: Opt(T.Union([Str(), T.Array(T.Unknown())], { errorMessage: 'expected a string or an array of blocks' })),
  is_error: Opt(Bool()),
  cache_control: Cache,
})
const SearchResultBlock = Obj({ type: T.Literal('search_result'), source: Str(), title: Str(), content: T.Array(TextBlock, { errorMessage: 'expected an array of text blocks' }), citations: CitationsSetting, cache_control: Cache })
// Thinking blocks go back byte for byte, so both fields must be there.
const ThinkingBlock = Obj({ type: T.Literal('thinking'), thinking: Str(), signature: Str() })
const RedactedThinkingBlock = Obj({ type: T.Literal('redacted_thinking'), data: Str() })
const ServerToolUseBlock = Obj({ type: T.Literal('server_tool_use'), id: NonEmpty(), name: NonEmpty(), input: T.Unknown(), cache_control: Cache })
/** Results of server tools (`web_search_tool_result`, `code_execution_tool_result` …): any `*_tool_result` type. */
export const ServerToolResultBlock = Obj({ type: Str({ pattern: '^[a-z0-9_]+_tool_result$' }), tool_use_id: NonEmpty(), cache_control: Cache })
/** A tool-search hit inside a tool_result (Claude Code with `defer_loading` tools). */
const ToolReferenceBlock = Obj({ type: T.Literal('tool_reference'), tool_name: NonEmpty(), cache_control: Cache })

/** A content block as validate.ts leaves it: one of the blocks above, told apart by `type`. */
export type MessagesBlock =
  | Static<typeof TextBlock>
  | Static<typeof ImageBlock>
  | Static<typeof DocumentBlock>
  | Static<typeof ToolUseBlock>
  | Static<typeof ToolResultBlock>
  | Static<typeof SearchResultBlock>
  | Static<typeof ThinkingBlock>
  | Static<typeof RedactedThinkingBlock>
  | Static<typeof ServerToolUseBlock>
  | Static<typeof ToolReferenceBlock>
  | Static<typeof CompactionBlock>

/** A media source as validate.ts leaves it (SOURCES), told apart by `type`. */
export type MessagesSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'content'; content: string | unknown[] }

/** A file for the code execution tool's container: meaningful to Anthropic only (another model does without it, as without that tool). */
const ContainerUploadBlock = Obj({ type: T.Literal('container_upload'), file_id: NonEmpty(), cache_control: Cache })

/**
 * The conversation's own bookkeeping (beta): a reply's MCP calls, its tool listing, a compaction
 * summary and a model fallback, sent back as they came; and a tool made available or taken away
 * from a point on. Meaningful to Anthropic only: another model continues from the text around them.
 */
const ToolChange = T.Union([T.Literal('tool_addition'), T.Literal('tool_removal')])
const ToolChangeBlock = Obj({ type: ToolChange, tool: AnyObject, cache_control: Cache })
const CompactionBlock = Obj({ type: T.Literal('compaction'), content: Opt(OrNull(Str(), 'expected a string')), cache_control: Cache })
const BOOKKEEPING = {
  mcp_tool_use: Obj({ type: T.Literal('mcp_tool_use'), id: NonEmpty(), name: NonEmpty(), server_name: NonEmpty(), input: T.Unknown(), cache_control: Cache }),
  mcp_tool_listing: Obj({ type: T.Literal('mcp_tool_listing'), mcp_server_name: NonEmpty(), tools: T.Array(AnyObject, { errorMessage: 'expected an array of tool objects' }) }),
  compaction: CompactionBlock,
  fallback: Obj({ type: T.Literal('fallback'), from: AnyObject, to: AnyObject }),
  tool_addition: ToolChangeBlock,
  tool_removal: ToolChangeBlock,
}

const USER_BLOCKS = {
  text: TextBlock, image: ImageBlock, document: DocumentBlock, tool_result: ToolResultBlock, search_result: SearchResultBlock, container_upload: ContainerUploadBlock,
  tool_addition: ToolChangeBlock, tool_removal: ToolChangeBlock,
}

export type MessagesRole = 'user' | 'tool' | 'assistant' | 'system'

/** Which blocks each role may carry; `*_tool_result` server blocks are matched by suffix in validate.ts. */
export const BLOCKS_BY_ROLE: Record<MessagesRole, Record<string, TSchema>> = {
  user: USER_BLOCKS,
  tool: USER_BLOCKS,
  assistant: { text: TextBlock, tool_use: ToolUseBlock, thinking: ThinkingBlock, redacted_thinking: RedactedThinkingBlock, server_tool_use: ServerToolUseBlock, ...BOOKKEEPING },
  system: { text: TextBlock },
}

/** Blocks a document's `content` source may be made of: its text is what a GPT model reads. */
export const DOCUMENT_CONTENT_BLOCKS: Record<string, TSchema> = { text: TextBlock, image: ImageBlock }

/** Blocks a tool_result's content array may hold. */
export const TOOL_RESULT_BLOCKS: Record<string, TSchema> = {
  text: TextBlock,
  image: ImageBlock,
  document: DocumentBlock,
  search_result: SearchResultBlock,
  tool_reference: ToolReferenceBlock,
}

/** Message fields other than `content`; a `tool` message may name the call it answers. */
export const MESSAGE_FIELDS = Obj({
  tool_use_id: Opt(NonEmpty()),
  tool_call_id: Opt(NonEmpty()),
})

/**
 * A message as validate.ts leaves it: a role of BLOCKS_BY_ROLE, content that role may carry
 * (an assistant's `*_tool_result` server blocks are not among MessagesBlock: decode leaves
 * them out by their type), and MESSAGE_FIELDS.
 */
export type MessagesMessage = Static<typeof MESSAGE_FIELDS> & { role: MessagesRole; content: string | MessagesBlock[] }

export const TOOL_NAME = '^[a-zA-Z0-9_-]{1,128}$'

export const CustomTool = Obj({
  type: Opt(OrNull(T.Literal('custom'), 'expected "custom"')),
  name: Str({ pattern: TOOL_NAME, errorMessage: 'expected a name of 1-128 characters a-z, A-Z, 0-9, _ or -' }),
  description: Opt(Str()),
  input_schema: Obj({ type: Opt(T.Literal('object', { errorMessage: 'expected "object"' })) }, { additionalProperties: true, errorMessage: 'expected a JSON Schema object' }),
  cache_control: Cache,
  defer_loading: Opt(Bool()),
  strict: Opt(Bool()),
  eager_input_streaming: Opt(OrNull(Bool(), 'expected a boolean')),
  input_examples: Opt(T.Array(T.Unknown(), { errorMessage: 'expected an array' })),
  allowed_callers: Opt(StrArray),
})

/** Anthropic server tools (`web_search_20250305`, `bash_20250124` …): a versioned `type` and a `name`. */
export const ServerTool = Obj({ type: NonEmpty(), name: NonEmpty(), cache_control: Cache, defer_loading: Opt(Bool()) })

/** A tool as validate.ts leaves it: a custom or a server tool, told apart by isServerTool. */
export type MessagesCustomTool = Static<typeof CustomTool>
export type MessagesTool = MessagesCustomTool | Static<typeof ServerTool> | Static<typeof McpToolset>

const DisableParallel = Opt(Bool())
/** tool_choice objects by `type`. */
export const TOOL_CHOICES = {
  auto: Obj({ type: T.Literal('auto'), disable_parallel_tool_use: DisableParallel }),
  any: Obj({ type: T.Literal('any'), disable_parallel_tool_use: DisableParallel }),
  none: Obj({ type: T.Literal('none') }),
  tool: Obj({ type: T.Literal('tool'), name: NonEmpty(), disable_parallel_tool_use: DisableParallel }),
  // The chat spelling is taken too: clients moving from chat send it.
  function: Obj({ type: T.Literal('function'), function: Obj({ name: NonEmpty() }, { errorMessage: 'expected { name }' }), disable_parallel_tool_use: DisableParallel }),
}

export const CHOICE_MODES = ['auto', 'none', 'any'] as const

/** tool_choice as validate.ts leaves it: a mode, or one of TOOL_CHOICES told apart by `type`. */
export type MessagesToolChoice = (typeof CHOICE_MODES)[number] | Static<(typeof TOOL_CHOICES)[keyof typeof TOOL_CHOICES]>

// a provider-owned value set (the `thinking` row's `owned`): any string here, checked where translated
const Display = Opt(OrNull(Str(), 'expected a string'))
export const THINKING = {
  enabled: Obj({
    type: T.Literal('enabled'),
    budget_tokens: T.Integer({ minimum: 1024, errorMessage: 'expected an integer of at least 1024 (the least thinking budget Anthropic accepts)' }),
    display: Display,
  }),
  disabled: Obj({ type: T.Literal('disabled') }),
  adaptive: Obj({ type: T.Literal('adaptive'), display: Display }),
  between_tools: Obj({ type: T.Literal('between_tools') }),
}

/** `thinking` as validate.ts leaves it: one of THINKING, told apart by `type`. */
export type MessagesThinking = Static<(typeof THINKING)[keyof typeof THINKING]>


/** Which tools of an `mcp_servers` entry Claude may call (beta): named by its server, not by a name of its own. */
export const McpToolset = Obj({ type: T.Literal('mcp_toolset'), mcp_server_name: NonEmpty(), cache_control: Cache })

/** A server tool has a versioned `type` of its own; a custom tool has none (or `custom`). */
export function isServerTool(tool: MessagesTool): tool is Static<typeof ServerTool> | Static<typeof McpToolset>
export function isServerTool(tool: Record<string, unknown>): boolean
export function isServerTool(tool: { type?: unknown }): boolean {
  return typeof tool.type === 'string' && tool.type !== 'custom'
}
