// Every rule of the messages-style body is a 400 naming the exact
// field; what Claude Code and the official API send is accepted.
import { describe, expect, test } from 'bun:test'
import { HttpError } from '../../src/http/errors.ts'
import { normalizeMessagesBody } from '../../src/surfaces/messages/validate.ts'
import { body, CLAUDE, CLAUDE_CODE_BODY, decode, GPT, rejection } from './helpers.ts'

const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, input_schema: { type: 'object', properties: {} }, ...extra })
const img = (source: unknown) => ({ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source }] })
const doc = (source: unknown) => ({ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'document', source }] })
const CALL_1 = { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }] }
const toolTurns = (result: Record<string, unknown>) => [
  { role: 'user', content: 'go' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', ...result }] },
]

describe('normalizeMessagesBody', () => {
  const status = (raw: unknown) => {
    try {
      normalizeMessagesBody(raw)
    } catch (e) {
      return e instanceof HttpError ? `${e.status} ${e.message}` : 'not http'
    }
    return 'accepted'
  }
  test('not an object', () => {
    for (const raw of [null, [], 'x', 1, true]) expect(status(raw)).toStartWith('400 Request body: expected a JSON object')
  })
  test('unknown parameters are named', () => {
    expect(status(body({ frobnicate: 1, max_completion_tokens: 5 }))).toBe('400 Unknown parameters: frobnicate, max_completion_tokens')
    expect(status(body({ toString: 1 }))).toBe('400 Unknown parameter: toString')
  })
  test('required: messages, max_tokens', () => {
    expect(status({ model: CLAUDE, max_tokens: 5 })).toBe('400 messages: required')
    expect(status({ model: CLAUDE, messages: [] })).toBe('400 max_tokens: required')
    expect(status({ model: CLAUDE, messages: [], max_tokens: null })).toBe('400 max_tokens: required')
  })
  test('null-valued parameters are left out', () => {
    expect(normalizeMessagesBody(body({ temperature: null, top_k: null }))).toEqual(body())
  })
})

// [what, body, the start of the 400 message]
const CASES: [string, Record<string, unknown>, string][] = [
  ['max_tokens 0', body({ max_tokens: 0 }), 'max_tokens: expected an integer greater than 0'],
  ['max_tokens fraction', body({ max_tokens: 1.5 }), 'max_tokens: expected an integer'],
  ['max_tokens string', body({ max_tokens: '5' }), 'max_tokens: expected an integer'],
  ['max_tokens above the model output', body({ max_tokens: 64_001 }), 'max_tokens: 64001 is greater than the maximum output of claude-sonnet-4-5'],
  ['temperature 1.5', body({ temperature: 1.5 }), 'temperature: expected a number from 0 to 1'],
  ['temperature -0.1', body({ temperature: -0.1 }), 'temperature: expected a number from 0 to 1'],
  ['top_p 2', body({ top_p: 2 }), 'top_p: expected a number from 0 to 1'],
  ['top_k 0', body({ top_k: 0 }), 'top_k: expected an integer greater than 0'],
  ['top_k 1.5', body({ top_k: 1.5 }), 'top_k: expected an integer greater than 0'],
  ['stream "true"', body({ stream: 'true' }), 'stream: expected a boolean'],
  ['stop_sequences string', body({ stop_sequences: 'x' }), 'stop_sequences: expected an array of strings'],
  ['stop_sequences [1]', body({ stop_sequences: [1] }), 'stop_sequences[0]: expected a string'],
  ['messages empty', body({ messages: [] }), 'messages: expected a non-empty array'],
  ['messages object', body({ messages: {} }), 'messages: expected a non-empty array'],
  ['message not object', body({ messages: ['hi'] }), 'messages[0]: expected a message object, got a string'],
  ['role missing', body({ messages: [{ content: 'x' }] }), 'messages[0].role: required'],
  ['role developer', body({ messages: [{ role: 'developer', content: 'x' }] }), 'messages[0].role: expected one of "user", "tool", "assistant", "system"'],
  ['content missing', body({ messages: [{ role: 'user' }] }), 'messages[0].content: required'],
  ['content number', body({ messages: [{ role: 'user', content: 5 }] }), 'messages[0].content: expected a string or an array'],
  ['block not object', body({ messages: [{ role: 'user', content: ['x'] }] }), 'messages[0].content[0]: expected a content block object'],
  ['block type missing', body({ messages: [{ role: 'user', content: [{ text: 'x' }] }] }), 'messages[0].content[0].type: required'],
  ['block type unknown', body({ messages: [{ role: 'user', content: 'x' }, { role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }), 'messages[1].content[0].type: expected one of "text", "image", "document", "tool_result", "search_result", "container_upload", "tool_addition", "tool_removal" in a user message'],
  ['thinking in a user turn', body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'thinking', thinking: 'x', signature: 's' }] }] }), 'messages[0].content[1].type: expected one of'],
  ['image in an assistant turn', body({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }] }), 'messages[1].content[0].type: expected one of "text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use", "mcp_tool_listing", "compaction", "fallback", "tool_addition", "tool_removal" in an assistant message'],
  ['text not string', body({ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }), 'messages[0].content[0].text: expected a string'],
  ['no text at all', body({ messages: [img({ type: 'url', url: 'https://x/a.png' }).content[1]].map((b) => ({ role: 'user', content: [b] })) }), 'messages: at least one text segment is required'],
  ['only empty text', body({ messages: [{ role: 'user', content: '' }] }), 'messages: at least one text segment is required'],
  ['image source missing', body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image' }] }] }), 'messages[0].content[1].source: required'],
  ['image source type', body({ messages: [img({ type: 'text', media_type: 'text/plain', data: 'x' })] }), 'messages[0].content[1].source.type: expected one of "base64", "url", "file" for an image, got "text"'],
  ['image base64 no data', body({ messages: [img({ type: 'base64', media_type: 'image/png' })] }), 'messages[0].content[1].source.data: required'],
  ['image url no url', body({ messages: [img({ type: 'url' })] }), 'messages[0].content[1].source.url: required'],
  // Anthropic's API takes these and no other: another reached a GPT model unchecked
  ['image base64 of a format Claude does not take', body({ messages: [img({ type: 'base64', media_type: 'image/bmp', data: 'Qk0=' })] }), 'messages[0].content[1].source.media_type: expected one of "image/jpeg", "image/png", "image/gif", "image/webp"'],
  ['document base64 that is not a PDF', body({ messages: [doc({ type: 'base64', media_type: 'text/plain', data: 'aGk=' })] }), 'messages[0].content[1].source.media_type: expected "application/pdf"'],
  ['document text wrong media type', body({ messages: [doc({ type: 'text', media_type: 'text/html', data: 'x' })] }), 'messages[0].content[1].source.media_type: expected "text/plain"'],
  ['document file no id', body({ messages: [doc({ type: 'file' })] }), 'messages[0].content[1].source.file_id: required'],
  ['document source unknown', body({ messages: [doc({ type: 'ftp' })] }), 'messages[0].content[1].source.type: expected one of "base64", "url", "text", "file", "content" for a document, got "ftp"'],
  ['tool_use input string', body({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: '{}' }] }] }), 'messages[1].content[0].input: expected an object'],
  ['tool_use id missing', body({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }] }), 'messages[1].content[0].id: required'],
  ['tool_result id missing', body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'tool_result', content: 'x' }] }] }), 'messages[0].content[1].tool_use_id: required'],
  ['tool_result is_error string', body({ messages: toolTurns({ content: 'x', is_error: 'yes' }) }), 'messages[2].content[0].is_error: expected a boolean'],
  ['tool_result content number', body({ messages: toolTurns({ content: 5 }) }), 'messages[2].content[0].content: expected a string or an array'],
  ['tool_result content block type', body({ messages: toolTurns({ content: [{ type: 'tool_use', id: 'x', name: 'y', input: {} }] }) }), 'messages[2].content[0].content[0].type: expected one of "text", "image", "document", "search_result", "tool_reference" in a tool_result'],
  ['tool_result image bad source', body({ messages: toolTurns({ content: [{ type: 'image', source: { type: 'url' } }] }) }), 'messages[2].content[0].content[0].source.url: required'],
  ['thinking without signature', body({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }] }), 'messages[1].content[0].signature: required'],
  ['redacted_thinking without data', body({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'redacted_thinking' }] }] }), 'messages[1].content[0].data: required'],
  ['cache_control wrong type', body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'forever' } }] }] }), 'messages[0].content[0].cache_control'],
  ['top-level cache_control', body({ cache_control: { type: 'x' } }), 'cache_control.type: expected "ephemeral"'],
  ['system number', body({ system: 5 }), 'system: expected a string or an array of text blocks'],
  ['system image block', body({ system: [{ type: 'image' }] }), 'system[0].type: expected "text", got "image"'],
  ['system block text missing', body({ system: [{ type: 'text' }] }), 'system[0].text: required'],
  ['system message with tool_use', body({ messages: [{ role: 'user', content: 'a' }, { role: 'system', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }), 'messages[1].content[0].type: expected one of "text" in a system message'],
  ['tools not array', body({ tools: {} }), 'tools: expected an array of tools'],
  ['tool not object', body({ tools: ['f'] }), 'tools[0]: expected a tool object, got a string'],
  ['tool name missing', body({ tools: [{ input_schema: { type: 'object' } }] }), 'tools[0].name: required'],
  ['tool name bad', body({ tools: [tool('a b')] }), 'tools[0].name: expected a name of 1-128 characters'],
  ['tool input_schema missing', body({ tools: [{ name: 'f' }] }), 'tools[0].input_schema: required'],
  ['tool input_schema type', body({ tools: [{ name: 'f', input_schema: { type: 'array' } }] }), 'tools[0].input_schema.type: expected "object"'],
  ['tool defer_loading string', body({ tools: [tool('f', { defer_loading: 'yes' })] }), 'tools[0].defer_loading: expected a boolean'],
  ['tool description number', body({ tools: [tool('f', { description: 1 })] }), 'tools[0].description: expected a string'],
  ['server tool without name', body({ tools: [{ type: 'web_search_20250305' }] }), 'tools[0].name: required'],
  ['duplicate tool names', body({ tools: [tool('f'), tool('g'), tool('f')] }), 'tools[2].name: duplicate tool name "f"'],
  ['tool_choice string', body({ tools: [tool('f')], tool_choice: 'required' }), 'tool_choice: expected "auto", "none", "any" or an object'],
  ['tool_choice type', body({ tools: [tool('f')], tool_choice: { type: 'force' } }), 'tool_choice.type: expected one of "auto", "any", "none", "tool", "function"'],
  ['tool_choice unknown tool', body({ tools: [tool('f')], tool_choice: { type: 'tool', name: 'g' } }), 'tool_choice.name: "g" is not among the tools'],
  ['tool_choice function unknown tool', body({ tools: [tool('f')], tool_choice: { type: 'function', function: { name: 'g' } } }), 'tool_choice.function.name: "g" is not among the tools'],
  ['tool_choice tool without name', body({ tools: [tool('f')], tool_choice: { type: 'tool' } }), 'tool_choice.name: required'],
  ['tool_choice any without tools', body({ tool_choice: 'any' }), 'tool_choice: "any" needs at least one tool'],
  ['disable_parallel_tool_use string', body({ tools: [tool('f')], tool_choice: { type: 'auto', disable_parallel_tool_use: 'yes' } }), 'tool_choice.disable_parallel_tool_use: expected a boolean'],
  ['thinking type', body({ thinking: { type: 'on' } }), 'thinking.type: expected one of "enabled", "disabled", "adaptive", "between_tools"'],
  ['thinking not object', body({ thinking: true }), 'thinking: expected an object'],
  ['thinking budget missing', body({ thinking: { type: 'enabled' } }), 'thinking.budget_tokens: required'],
  ['thinking budget 500 (Anthropic’s minimum)', body({ thinking: { type: 'enabled', budget_tokens: 500 } }), 'thinking.budget_tokens: expected an integer of at least 1024'],
  ['thinking budget ≥ max_tokens', body({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 } }), 'thinking.budget_tokens: must be less than max_tokens (2000)'],
  // provider-owned value sets: a Claude model takes any display or effort (the upstream judges);
  // translated for a GPT model, the gateway must know the value
  ['thinking display for a GPT model', body({ thinking: { type: 'adaptive', display: 'full' } }, GPT), 'thinking.display: "full" cannot be translated for gpt-4o'],
  ['metadata not object', body({ metadata: 'u' }), 'metadata: expected an object'],
  ['metadata.user_id number', body({ metadata: { user_id: 5 } }), 'metadata.user_id: expected a string'],
  ['parallel_tool_calls string', body({ parallel_tool_calls: 'no' }), 'parallel_tool_calls: expected a boolean'],
  ['pause_on_call_tools_start number', body({ pause_on_call_tools_start: 1 }), 'pause_on_call_tools_start: expected a boolean'],
  ['betas string', body({ betas: 'files-api-2025-04-14' }), 'betas: expected an array of strings'],
  ['betas token with a space', body({ betas: ['files-api-2025-04-14', 'a b'] }), 'betas[1]: expected a beta token'],
  ['betas token too long', body({ betas: ['x'.repeat(101)] }), 'betas[0]: expected a beta token'],
  ['reasoning_effort', body({ reasoning_effort: 'extreme' }), 'reasoning_effort: expected one of "none", "minimal", "low", "medium", "high", "xhigh"'],
  ['service_tier number', body({ service_tier: 1 }), 'service_tier: expected a string'],
  ['output_config.effort for a GPT model', body({ output_config: { effort: 'huge' } }, GPT), 'output_config.effort'],
  ['output_config not object', body({ output_config: 'x' }), 'output_config: expected an object'],
  // json_schema is the one output format: any other was dropped for a GPT model without a word
  ['output_format of another type', body({ output_format: { type: 'xml', schema: {} } }, GPT), 'output_format.type: expected "json_schema"'],
  ['output_format without its schema', body({ output_format: { type: 'json_schema' } }, GPT), 'output_format.schema: required'],
  ['output_config.format of another type', body({ output_config: { format: { type: 'xml' } } }), 'output_config.format: expected { type: "json_schema", schema }'],
  ['context_management array', body({ context_management: [] }), 'context_management: expected an object'],
  ['mcp_servers object', body({ mcp_servers: {} }), 'mcp_servers: expected an array'],
  ['container number', body({ container: 5 }), 'container: expected a container id (string) or an object'],
  ['model number', body({ model: 5 }), 'model: expected a string'],
  // a GPT model reads a document made of blocks as their text: a block it cannot read was left out
  ['document content block of no text', body({ messages: [doc({ type: 'content', content: [{ type: 'text', text: 5 }] })] }, GPT), 'messages[0].content[1].source.content[0].text: expected a string'],
  ['document content block of another type', body({ messages: [doc({ type: 'content', content: [{ type: 'tool_use' }] })] }), 'messages[0].content[1].source.content[0].type: expected one of "text", "image"'],
  ['document content image source', body({ messages: [doc({ type: 'content', content: [{ type: 'image', source: { type: 'url', url: 5 } }] })] }), 'messages[0].content[1].source.content[0].source.url: expected a non-empty string'],
  ['document citations not an object', body({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' }, citations: 'on' }] }] }), 'messages[0].content[0].citations: expected { enabled? }'],
  ['document citations.enabled string', body({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' }, citations: { enabled: 'yes' } }] }] }), 'messages[0].content[0].citations: expected { enabled? }'],
  ['search result citations string', body({ messages: [{ role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [{ type: 'text', text: 'x' }], citations: 'on' }] }] }), 'messages[0].content[0].citations: expected { enabled? }'],
  ['text block citations string', body({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'text', text: 'b', citations: 'x' }] }, { role: 'user', content: 'c' }] }), 'messages[1].content[0].citations: expected an array of citation objects'],
  ['tool message with bad id', body({ messages: [{ role: 'user', content: 'a' }, { role: 'tool', tool_call_id: 5, content: 'x' }] }), 'messages[1].tool_call_id: expected a non-empty string'],
  // Anthropic pairs each result with a call of the turn just before it; a GPT model was sent the
  // orphan in OpenAI's terms, and the mock took it
  ['tool_result naming no call before it', body({ messages: toolTurns({ content: 'x', tool_use_id: 'toolu_9' }) }, GPT), 'messages[2].content[0].tool_use_id: "toolu_9" answers no tool_use of the assistant message before it'],
  ['tool_result in the first message', body({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] }] }), 'messages[0].content[0].tool_use_id: "toolu_1" answers no tool_use'],
  ['tool_result answering a call two turns back', body({ messages: [...toolTurns({ content: 'x' }), { role: 'assistant', content: 'ok' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] }] }), 'messages[4].content[0].tool_use_id: "toolu_1" answers no tool_use'],
  ['tool message naming no call before it', body({ messages: [{ role: 'user', content: 'a' }, CALL_1, { role: 'tool', tool_use_id: 'call_2', content: 'x' }] }), 'messages[2].tool_use_id: "call_2" answers no tool_use'],
  ['a call left unanswered as the conversation goes on', body({ messages: [{ role: 'user', content: 'a' }, CALL_1, { role: 'user', content: 'never mind' }] }, GPT), 'messages[1].content: tool_use "call_1" has no tool_result answering it in the next message, messages[2]'],
  ['one of two calls answered', body({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }, { type: 'tool_use', id: 'b', name: 'f', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b' }] }] }), 'messages[1].content: tool_use "a" has no tool_result'],
]

describe('validateMessages: a 400 naming the field', () => {
  for (const [what, raw, message] of CASES) {
    test(what, () => expect(rejection(raw)).toStartWith(message))
  }
})

describe('accepted shapes', () => {
  const ok = (raw: Record<string, unknown>) => expect(() => decode(raw)).not.toThrow()
  test('provider-owned values the gateway does not know go to a Claude model as they are', () => {
    ok(body({ thinking: { type: 'adaptive', display: 'updates' } }))
    ok(body({ output_config: { effort: 'ultra' } }))
  })
  test('every media source an image or a document block may name', () => {
    ok(body({ messages: [img({ type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' })] }))
    ok(body({ messages: [img({ type: 'url', url: 'https://example.com/a.png' })] }))
    ok(body({ messages: [img({ type: 'file', file_id: 'file_1' })] }))
    ok(body({ messages: [doc({ type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' })] }))
    ok(body({ messages: [doc({ type: 'url', url: 'https://example.com/a.pdf' })] }))
    ok(body({ messages: [doc({ type: 'text', media_type: 'text/plain', data: 'plain' })] }))
    ok(body({ messages: [doc({ type: 'file', file_id: 'file_1' })] }))
    ok(body({ messages: [doc({ type: 'content', content: [{ type: 'text', text: 'a' }] })] }))
    ok(body({ messages: [doc({ type: 'content', content: [{ type: 'text', text: 'a', citations: null }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] })] }))
    ok(body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' }, citations: { enabled: true } }] }] }))
    ok(body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' }, citations: null }] }] }))
  })
  test('tool results: string, text / image / document blocks, is_error, cache_control; text inside counts as text', () => {
    ok(body({ messages: toolTurns({ content: 'out', is_error: true, cache_control: { type: 'ephemeral' } }) }))
    ok(body({ messages: toolTurns({ content: [{ type: 'text', text: 'a' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' } }] }) }))
    ok(body({ messages: toolTurns({ content: 'only a result' }).slice(1) }))
  })
  test('assistant turns with thinking, redacted thinking, server tool blocks (byte for byte)', () => {
    ok(body({
      messages: [
        { role: 'user', content: 'search' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '', signature: 'EqQBCkYIBxgCKkA=' },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT' },
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'text', text: 'found' },
          ],
        },
      ],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
    }))
  })
  test('tool_choice in every spelling the surface takes (the chat one too)', () => {
    const tools = [tool('f')]
    for (const tool_choice of ['auto', 'none', 'any', { type: 'auto' }, { type: 'any', disable_parallel_tool_use: true }, { type: 'none' }, { type: 'tool', name: 'f' }, { type: 'function', function: { name: 'f' } }]) {
      ok(body({ tools, tool_choice }))
    }
  })
  test('tool results as Anthropic pairs them: one turn of several messages, a system message between, the last turn\'s calls not yet answered', () => {
    const calls = { role: 'assistant', content: [{ type: 'text', text: 'two' }, { type: 'tool_use', id: 'a', name: 'f', input: {} }, { type: 'tool_use', id: 'b', name: 'f', input: {} }] }
    const sys = { role: 'system', content: 'env' }
    ok(body({ messages: [{ role: 'user', content: 'go' }, calls, sys, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b' }] }, { role: 'tool', tool_use_id: 'a', content: 'x' }] }))
    ok(body({ messages: [{ role: 'user', content: 'go' }, calls] }))
    ok(body({ messages: [{ role: 'user', content: 'go' }, calls, sys] }))
  })
  test('a message thread\'s first turn may answer a call Anthropic holds', () => {
    ok(body({ thread: { type: 'continue', previous_message_id: 'msg_1' }, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_held', content: 'x' }] }] }))
  })
  test('a role "tool" message', () => {
    ok(body({ messages: [{ role: 'user', content: 'a' }, CALL_1, { role: 'tool', tool_call_id: 'call_1', content: 'result' }] }))
  })
  test('a mock model takes max_tokens up to its context window', () => {
    ok(body({ max_tokens: 128_000 }, 'mock-claude'))
    expect(rejection(body({ max_tokens: 200_001 }, 'mock-claude'))).toStartWith('max_tokens: 200001 is greater than the context window of mock-claude')
  })
  test('interleaved thinking lets the budget pass max_tokens', () => {
    ok(body({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 4000 }, betas: ['interleaved-thinking-2025-05-14'] }))
  })
})

describe('Claude Code', () => {
  test('its request shape is accepted for a Claude model', () => {
    const { ir, rules } = decode(CLAUDE_CODE_BODY)
    expect(rules.removed).toEqual([])
    expect(ir.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'user'])
    expect(ir.providerData?.anthropic).toEqual({
      thinking: CLAUDE_CODE_BODY.thinking,
      context_management: CLAUDE_CODE_BODY.context_management,
      output_config: CLAUDE_CODE_BODY.output_config,
    })
    expect(ir.user).toBe(CLAUDE_CODE_BODY.metadata.user_id)
    expect(ir.tools?.[2]?.providerData).toEqual({ anthropic: { defer_loading: true } })
  })
})

describe('OpenAI-family models refuse the Anthropic-style parameters (reject mode)', () => {
  test('top_k, stop_sequences, thinking, cache_control are named in one 400', () => {
    const raw = body({ top_k: 5, stop_sequences: ['x'], thinking: { type: 'enabled', budget_tokens: 1024 }, cache_control: { type: 'ephemeral' }, max_tokens: 2048 }, GPT)
    expect(rejection(raw)).toBe('Parameters not supported for OpenAI-family model gpt-4o: top_k, stop_sequences, thinking, cache_control')
  })
  // output_config is translated in every mode: its effort is OpenAI's, its format OpenAI's
  // json_schema (the Anthropic SDK's messages.parse sends it)
  test('Claude Code’s context_management too; not its output_config', () => {
    expect(rejection({ ...CLAUDE_CODE_BODY, model: GPT, max_tokens: 1000 })).toBe('Parameters not supported for OpenAI-family model gpt-4o: thinking, context_management')
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }
    const { ir } = decode(body({ output_config: { effort: 'low', format: { type: 'json_schema', schema } } }, 'gpt-5'))
    expect(ir.reasoning).toEqual({ effort: 'low' })
    expect(ir.responseFormat).toEqual({ type: 'json_schema', name: 'output', schema, strict: true })
  })
  test('translate mode: thinking → effort, stop_sequences → stop, the rest dropped', () => {
    const raw = body({ top_k: 5, stop_sequences: ['x'], thinking: { type: 'enabled', budget_tokens: 20_000 }, max_tokens: 30_000 }, 'gpt-5')
    const { ir, rules } = decode(raw, 'translate')
    expect(rules.removed.sort()).toEqual(['stop_sequences', 'thinking', 'top_k'])
    expect(ir.topK).toBeUndefined()
    expect(ir.stop).toEqual(['x'])
    expect(ir.reasoning).toEqual({ effort: 'high' })
    expect(ir.providerData).toBeUndefined()
  })
  test('parallel_tool_calls and service_tier are the surface’s own, also for Claude', () => {
    const { rules } = decode(body({ parallel_tool_calls: false, service_tier: 'auto' }))
    expect(rules.removed).toEqual([])
  })
})
