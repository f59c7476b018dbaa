// Sends each request parameter the installed official SDKs declare (top-level, tool types,
// content parts, input items), with a valid value, through that SDK to a real gateway in front
// of a fake upstream, for a model of each family; prints what got a 400, and for the model's own
// family whether a top-level parameter reached the upstream. A probe for people, not a test:
//   bun scripts/sdk-param-probe.ts [chat|responses|messages] [filter]
import OpenAI from 'openai'
import Anthropic from '@anthropic-ai/sdk'
import { fixture, startFakeUpstream } from '../test/helpers/fake-upstream.ts'
import { startGateway } from '../test/helpers/server.ts'

type Case = [label: string, extra: Record<string, unknown>, topLevel?: string]
const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false }
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const PNG64 = PNG.split(',')[1]!
const PDF64 = Buffer.from('%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 3 3]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n').toString('base64')
const top = (name: string, value: unknown): Case => [name, { [name]: value }, name]
const user = (content: unknown) => ({ role: 'user', content })

const CHAT: Case[] = [
  top('audio', { format: 'wav', voice: 'alloy' }), top('frequency_penalty', 0.5), top('function_call', 'auto'),
  top('functions', [{ name: 'f', parameters: schema }]), top('logit_bias', { '50256': -100 }), top('logprobs', true),
  top('max_completion_tokens', 100), top('max_tokens', 100), top('metadata', { a: 'b' }), top('modalities', ['text']),
  top('moderation', { model: 'omni-moderation-latest' }), top('n', 1), top('parallel_tool_calls', false),
  top('prediction', { type: 'content', content: 'x' }), top('presence_penalty', 0.5), top('prompt_cache_key', 'k'),
  top('prompt_cache_options', { mode: 'implicit' }), top('prompt_cache_retention', 'in_memory'), top('prompt_cache_retention', '24h'),
  top('reasoning_effort', 'low'), top('response_format', { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } }),
  top('response_format', { type: 'json_object' }), top('safety_identifier', 'u1'), top('seed', 1), top('service_tier', 'flex'),
  top('service_tier', 'fast'), top('stop', ['x']), top('store', true), top('stream_options', { include_usage: true }),
  top('temperature', 1), top('tool_choice', 'auto'), top('top_logprobs', 2), top('top_p', 0.5), top('user', 'u'),
  top('verbosity', 'low'), top('web_search_options', { search_context_size: 'low', user_location: { type: 'approximate', approximate: { country: 'US' } } }),
  ['tool function', { tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: schema, strict: true } }] }],
  ['tool custom text', { tools: [{ type: 'custom', custom: { name: 'c', description: 'd', format: { type: 'text' } } }] }],
  ['tool custom grammar', { tools: [{ type: 'custom', custom: { name: 'c', format: { type: 'grammar', grammar: { definition: 'start: "a"', syntax: 'lark' } } } }] }],
  ['tool_choice allowed_tools', { tools: [{ type: 'function', function: { name: 'f', parameters: schema } }], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'f' } }] } } }],
  ['tool_choice custom', { tools: [{ type: 'custom', custom: { name: 'c' } }], tool_choice: { type: 'custom', custom: { name: 'c' } } }],
  ['part text', { messages: [user([{ type: 'text', text: 'hi' }])] }],
  ['part image_url', { messages: [user([{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: PNG, detail: 'low' } }])] }],
  ['part image_url detail original', { messages: [user([{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: PNG, detail: 'original' } }])] }],
  ['part file (file_id)', { messages: [user([{ type: 'text', text: 'hi' }, { type: 'file', file: { file_id: 'file-abc' } }])] }],
  ['part input_audio', { messages: [user([{ type: 'text', text: 'hi' }, { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }])] }],
  ['part file (data)', { messages: [user([{ type: 'text', text: 'hi' }, { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF64}`, filename: 'a.pdf' } }])] }],
  ['msg developer', { messages: [{ role: 'developer', content: [{ type: 'text', text: 'be brief' }], name: 'd' }, user('hi')] }],
  ['msg system', { messages: [{ role: 'system', content: 'be brief', name: 's' }, user('hi')] }],
  ['msg assistant+tool', { messages: [user('hi'), { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] }], tools: [{ type: 'function', function: { name: 'f', parameters: schema } }] }],
  ['msg assistant custom call', { messages: [user('hi'), { role: 'assistant', tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'c', input: 'x' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'ok' }], tools: [{ type: 'custom', custom: { name: 'c' } }] }],
  ['msg assistant refusal part', { messages: [user('hi'), { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }, user('again')] }],
  top('thinking', { type: 'adaptive' }),
  ['msg assistant audio', { messages: [user('hi'), { role: 'assistant', audio: { id: 'audio_1' } }, user('again')] }],
  ['msg function (legacy)', { messages: [user('hi'), { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'f', content: 'ok' }], functions: [{ name: 'f', parameters: schema }] }],
]

const fn = { type: 'function', name: 'f', parameters: schema, strict: true }
const RESPONSES: Case[] = [
  top('access_programs', { programs: [] }), top('background', false), top('background_options', { completion_window: '24h' }),
  top('context_management', [{ type: 'compaction', compact_threshold: 1000 }]), top('conversation', 'conv_1'),
  top('image', {}), top('include', ['reasoning.encrypted_content']), top('include', ['message.output_text.logprobs']),
  top('instructions', 'be brief'), top('max_output_tokens', 100), top('max_tool_calls', 3), top('metadata', { a: 'b' }),
  top('moderation', { model: 'omni-moderation-latest' }), top('parallel_tool_calls', false), top('previous_response_id', 'resp_1'),
  top('prompt', { id: 'pmpt_1', version: '2', variables: { x: 'y' } }), top('prompt_cache_key', 'k'), top('prompt_cache_options', { mode: 'implicit' }),
  top('prompt_cache_retention', 'in_memory'), top('prompt_cache_retention', '24h'),
  top('reasoning', { effort: 'low', summary: 'auto', context: 'all_turns', mode: 'standard' }), top('reasoning', { context: 'all_turns' }), top('reasoning', { mode: 'standard' }),
  top('safety_identifier', 'u1'), top('service_tier', 'flex'), top('service_tier', 'fast'), top('store', false), top('stream_options', { include_obfuscation: false }),
  top('temperature', 1), top('text', { format: { type: 'json_schema', name: 'x', schema, strict: true }, verbosity: 'low' }),
  top('tool_choice', 'required'), top('top_logprobs', 2), top('top_p', 0.5), top('truncation', 'auto'), top('user', 'u'),
  ['tool function', { tools: [fn] }],
  ['tool file_search', { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }],
  ['tool computer', { tools: [{ type: 'computer' }] }],
  ['tool computer_use_preview', { tools: [{ type: 'computer_use_preview', display_height: 768, display_width: 1024, environment: 'browser' }] }],
  ['tool web_search', { tools: [{ type: 'web_search', search_context_size: 'low' }] }],
  ['tool web_search_2025_08_26', { tools: [{ type: 'web_search_2025_08_26' }] }],
  ['tool mcp', { tools: [{ type: 'mcp', server_label: 's', server_url: 'https://mcp.example.com/sse', require_approval: 'never' }] }],
  ['tool code_interpreter', { tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }],
  ['tool programmatic_tool_calling', { tools: [{ type: 'programmatic_tool_calling' }, fn] }],
  ['tool image_generation', { tools: [{ type: 'image_generation' }] }],
  ['tool local_shell', { tools: [{ type: 'local_shell' }] }],
  ['tool shell', { tools: [{ type: 'shell' }] }],
  ['tool custom', { tools: [{ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'lark', definition: 'start: "a"' } }] }],
  ['tool namespace', { tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'function', name: 'g', parameters: schema }] }] }],
  ['tool tool_search', { tools: [{ type: 'tool_search', execution: 'client' }] }],
  ['tool web_search_preview', { tools: [{ type: 'web_search_preview' }] }],
  ['tool apply_patch', { tools: [{ type: 'apply_patch' }] }],
  ['content input_text', { input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] }],
  ['content input_image', { input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_image', detail: 'auto', image_url: PNG }] }] }],
  ['content input_file', { input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_file', filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF64}` }] }] }],
  ['item easy message', { input: [{ role: 'developer', content: 'be brief' }, { role: 'user', content: 'hi' }] }],
  ['item message', { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }], status: 'completed' }] }],
  ['item output message', { input: [{ type: 'message', role: 'user', content: 'hi' }, { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'yo', annotations: [] }] }, { role: 'user', content: 'again' }] }],
  ['item function_call+output', { tools: [fn], input: [{ role: 'user', content: 'hi' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }] }],
  ['item function_call_output list', { tools: [fn], input: [{ role: 'user', content: 'hi' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'ok' }] }] }],
  ['item custom_tool_call+output', { tools: [{ type: 'custom', name: 'c' }], input: [{ role: 'user', content: 'hi' }, { type: 'custom_tool_call', call_id: 'c1', name: 'c', input: 'x' }, { type: 'custom_tool_call_output', call_id: 'c1', output: 'ok' }] }],
  ['item reasoning', { input: [{ role: 'user', content: 'hi' }, { type: 'reasoning', id: 'rs_1', summary: [] }, { role: 'user', content: 'again' }] }],
  ['item web_search_call', { input: [{ role: 'user', content: 'hi' }, { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } }, { role: 'user', content: 'again' }] }],
  ['item file_search_call', { input: [{ role: 'user', content: 'hi' }, { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q'] }, { role: 'user', content: 'again' }] }],
  ['item item_reference', { input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_x' }] }],
  ['item compaction', { input: [{ type: 'compaction', encrypted_content: 'abc' }, { role: 'user', content: 'hi' }] }],
  ['item compaction_trigger', { input: [{ role: 'user', content: 'hi' }, { type: 'compaction_trigger' }] }],
  ['item configuration_update', { input: [{ role: 'user', content: 'hi' }, { type: 'configuration_update' }] }],
  ['item additional_tools', { input: [{ role: 'user', content: 'hi' }, { type: 'additional_tools', role: 'developer', tools: [fn] }] }],
  ['item tool_search_call+output', { tools: [{ type: 'tool_search', execution: 'client' }], input: [{ role: 'user', content: 'hi' }, { type: 'tool_search_call', call_id: 'ts1', arguments: {}, execution: 'client' }, { type: 'tool_search_output', call_id: 'ts1', tools: [fn], execution: 'client' }] }],
  ['item shell_call+output', { tools: [{ type: 'shell' }], input: [{ role: 'user', content: 'hi' }, { type: 'shell_call', call_id: 's1', action: { commands: ['ls'] } }, { type: 'shell_call_output', call_id: 's1', output: [{ stdout: 'a', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] }] }],
  ['item apply_patch_call+output', { tools: [{ type: 'apply_patch' }], input: [{ role: 'user', content: 'hi' }, { type: 'apply_patch_call', call_id: 'p1', status: 'completed', operation: { type: 'delete_file', path: 'a' } }, { type: 'apply_patch_call_output', call_id: 'p1', status: 'completed' }] }],
  ['item local_shell_call+output', { tools: [{ type: 'local_shell' }], input: [{ role: 'user', content: 'hi' }, { type: 'local_shell_call', id: 'ls_1', call_id: 'l1', status: 'completed', action: { type: 'exec', command: ['ls'], env: {} } }, { type: 'local_shell_call_output', id: 'l1', output: 'a' }] }],
  ['tool_choice allowed_tools', { tools: [fn], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] } }],
  ['tool_choice hosted web_search_preview', { tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } }],
  ['tool_choice hosted file_search', { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }], tool_choice: { type: 'file_search' } }],
  ['tool_choice hosted computer', { tools: [{ type: 'computer' }], tool_choice: { type: 'computer' } }],
  ['tool_choice hosted image_generation', { tools: [{ type: 'image_generation' }], tool_choice: { type: 'image_generation' } }],
  ['tool_choice hosted code_interpreter', { tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], tool_choice: { type: 'code_interpreter' } }],
  ['tool_choice mcp', { tools: [{ type: 'mcp', server_label: 's', server_url: 'https://mcp.example.com/sse' }], tool_choice: { type: 'mcp', server_label: 's' } }],
  ['tool_choice custom', { tools: [{ type: 'custom', name: 'c' }], tool_choice: { type: 'custom', name: 'c' } }],
  ['tool_choice apply_patch', { tools: [{ type: 'apply_patch' }], tool_choice: { type: 'apply_patch' } }],
  ['tool_choice shell', { tools: [{ type: 'shell' }], tool_choice: { type: 'shell' } }],
  ['tool_choice function in namespace', { tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'function', name: 'g', parameters: schema }] }], tool_choice: { type: 'function', name: 'g', namespace: 'ns' } }],
  ['item computer_call+output', { tools: [{ type: 'computer' }], input: [{ role: 'user', content: 'hi' }, { type: 'computer_call', id: 'cu_1', call_id: 'k1', status: 'completed', pending_safety_checks: [], action: { type: 'screenshot' } }, { type: 'computer_call_output', call_id: 'k1', output: { type: 'computer_screenshot', image_url: PNG } }] }],
  ['item image_generation_call', { input: [{ role: 'user', content: 'hi' }, { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: PNG64 }, { role: 'user', content: 'again' }] }],
  ['item code_interpreter_call', { input: [{ role: 'user', content: 'hi' }, { type: 'code_interpreter_call', id: 'ci_1', status: 'completed', code: '1', container_id: 'cntr_1', outputs: [] }, { role: 'user', content: 'again' }] }],
  ['item mcp_list_tools+call', { input: [{ role: 'user', content: 'hi' }, { type: 'mcp_list_tools', id: 'mcpl_1', server_label: 's', tools: [] }, { type: 'mcp_call', id: 'mcp_1', server_label: 's', name: 't', arguments: '{}', output: 'ok' }, { role: 'user', content: 'again' }] }],
  ['item program+output', { tools: [{ type: 'programmatic_tool_calling' }, fn], input: [{ role: 'user', content: 'hi' }, { type: 'program', caller_id: 'prog_1' }, { type: 'program_output', id: 'po_1', call_id: 'prog_1', result: 'ok', status: 'completed' }] }],
  ['item function_call_output via program (no call_id)', { tools: [{ type: 'programmatic_tool_calling' }, fn], input: [{ role: 'user', content: 'hi' }, { type: 'function_call_output', output: 'ok', caller: { type: 'program', caller_id: 'prog_1' }, name: 'f' }] }],
  ['item item_reference type null', { input: [{ role: 'user', content: 'hi' }, { type: null, id: 'msg_x' }] }],
  ['item mcp_approval_response', { input: [{ role: 'user', content: 'hi' }, { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 's', name: 't', arguments: '{}' }, { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true }] }],
]

const tool = { name: 'f', description: 'd', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }
const userMsg = (content: unknown) => ({ role: 'user', content })
const MESSAGES: Case[] = [
  top('cache_control', { type: 'ephemeral', ttl: '1h' }), top('container', 'container_1'), top('diagnostics', { request_id: 'x' }),
  top('inference_geo', 'us'), top('metadata', { user_id: 'u' }), top('output_config', { effort: 'low' }),
  top('output_config', { format: { type: 'json_schema', schema } }), top('service_tier', 'standard_only'), top('speed', 'fast'),
  top('stop_sequences', ['x']), top('system', [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }]),
  top('thinking', { type: 'enabled', budget_tokens: 1024 }), top('thinking', { type: 'adaptive', display: 'summarized' }), top('thinking', { type: 'disabled' }),
  top('tool_choice', { type: 'any', disable_parallel_tool_use: true }), top('user_profile_id', 'up_1'), top('workspace_id', 'wrkspc_1'),
  top('temperature', 0.5), top('top_p', 0.5), top('top_k', 5),
  ['tool custom', { tools: [{ ...tool, type: 'custom', strict: true, eager_input_streaming: true, input_examples: [{ q: 'a' }] }] }],
  ...[
    ['bash_20250124', 'bash'], ['code_execution_20250522', 'code_execution'], ['code_execution_20250825', 'code_execution'],
    ['code_execution_20260120', 'code_execution'], ['code_execution_20260521', 'code_execution'], ['memory_20250818', 'memory'],
    ['text_editor_20250124', 'str_replace_editor'], ['text_editor_20250429', 'str_replace_based_edit_tool'], ['text_editor_20250728', 'str_replace_based_edit_tool'],
    ['web_search_20250305', 'web_search'], ['web_fetch_20250910', 'web_fetch'], ['web_search_20260209', 'web_search'], ['web_fetch_20260209', 'web_fetch'],
    ['web_fetch_20260309', 'web_fetch'], ['web_search_20260318', 'web_search'], ['web_fetch_20260318', 'web_fetch'],
    ['tool_search_tool_bm25_20251119', 'tool_search_tool_bm25'], ['tool_search_tool_regex_20251119', 'tool_search_tool_regex'],
  ].map(([type, name]): Case => [`tool ${type}`, { tools: [{ type, name }] }]),
  ['tool browser_20260801', { tools: [{ type: 'browser_20260801', name: 'browser' }] }],
  ['tool computer_20260801', { tools: [{ type: 'computer_20260801', name: 'computer', display_width_px: 1024, display_height_px: 768 }] }],
  ['block image base64', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG64 } }])] }],
  ['block image url', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }])] }],
  ['block document pdf', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF64 }, title: 't', citations: { enabled: true } }])] }],
  ['block document text', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } }])] }],
  ['block document content', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'doc' }] } }])] }],
  ['block search_result', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'search_result', source: 'https://e.com', title: 't', content: [{ type: 'text', text: 'r' }] }])] }],
  ['block thinking+redacted', { messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'redacted_thinking', data: 'd' }, { type: 'text', text: 'yo' }] }, userMsg('again')] }],
  ['block tool_use+tool_result', { tools: [tool], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { q: 'a' } }] }, userMsg([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }], is_error: false }])] }],
  ['block server_tool_use+web_search_tool_result', { tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } }, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://e.com', title: 't', encrypted_content: 'x' }] }] }, userMsg('again')] }],
  ['block container_upload', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'container_upload', file_id: 'file_1' }])] }],
  top('thinking', { type: 'between_tools' }),
  ['msg system role', { messages: [{ role: 'system', content: 'be brief' }, userMsg('hi')] }],
  ['block web_fetch_tool_result', { tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: 'https://e.com' } }, { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_fetch_result', url: 'https://e.com', content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } } } }] }, userMsg('again')] }],
  ['block code_execution_tool_result', { tools: [{ type: 'code_execution_20250522', name: 'code_execution' }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: '1' } }, { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'code_execution_result', stdout: '1', stderr: '', return_code: 0, content: [] } }] }, userMsg('again')] }],
  ['block bash_code_execution_tool_result', { tools: [{ type: 'code_execution_20250825', name: 'code_execution' }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'bash_code_execution', input: { command: 'ls' } }, { type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'bash_code_execution_result', stdout: '1', stderr: '', return_code: 0, content: [] } }] }, userMsg('again')] }],
  ['block tool_search_tool_result', { tools: [{ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }, { ...tool, defer_loading: true }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'tool_search_tool_regex', input: { query: 'f' } }, { type: 'tool_search_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'f' }] } }] }, userMsg('again')] }],
  top('container', { skills: [{ type: 'anthropic', skill_id: 'pptx', version: 'latest' }] }),
  top('output_config', { effort: 'xhigh' }),
  ['block image transformations', { messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG64 }, transformations: {} }])] }],
  ['block text with citations', { messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'text', text: 'yo', citations: [{ type: 'char_location', cited_text: 'a', document_index: 0, start_char_index: 0, end_char_index: 1, document_title: null }] }] }, userMsg('again')] }],
]

const BETA: Case[] = [
  top('betas', ['files-api-2025-04-14']), top('billing_policy', { type: 'standard' }), top('compaction', { enabled: true }),
  top('context_management', { edits: [{ type: 'clear_tool_uses_20250919' }] }), top('fallback_credit_token', 'tok'),
  top('fallbacks', { models: ['claude-sonnet-4-5'] }), top('mcp_servers', [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'm' }]),
  top('output_format', { type: 'json_schema', schema }),
  ['tool bash_20241022', { tools: [{ type: 'bash_20241022', name: 'bash' }] }],
  ['tool text_editor_20241022', { tools: [{ type: 'text_editor_20241022', name: 'str_replace_editor' }] }],
  ['tool computer_20241022', { tools: [{ type: 'computer_20241022', name: 'computer', display_width_px: 1024, display_height_px: 768 }] }],
  ['tool computer_20250124', { tools: [{ type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 }] }],
  ['tool computer_20251124', { tools: [{ type: 'computer_20251124', name: 'computer', display_width_px: 1024, display_height_px: 768 }] }],
  ['tool advisor_20260301', { tools: [{ type: 'advisor_20260301', name: 'advisor', model: 'claude-opus-4-7' }] }],
  ['tool mcp_toolset', { mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'm' }], tools: [{ type: 'mcp_toolset', mcp_server_name: 'm' }] }],
  ['block mcp_tool_use+result', { mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'm' }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 't', server_name: 'm', input: {} }, { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', content: 'ok', is_error: false }] }, userMsg('again')] }],
  ['block compaction', { messages: [{ role: 'assistant', content: [{ type: 'compaction', content: 'summary' }] }, userMsg('hi')] }],
  ['block tool_addition/removal', { tools: [tool], messages: [userMsg([{ type: 'text', text: 'hi' }, { type: 'tool_addition', tool: { type: 'tool_reference', tool_name: 'f' } }, { type: 'tool_removal', tool: { type: 'tool_reference', tool_name: 'f' } }])] }],
  ['block mcp_tool_listing', { mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'm' }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'mcp_tool_listing', mcp_server_name: 'm', tools: [{ name: 't', input_schema: { type: 'object' } }] }, { type: 'text', text: 'yo' }] }, userMsg('again')] }],
  ['block fallback', { messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'fallback', from: { model: 'claude-opus-4-7' }, to: { model: 'claude-sonnet-4-5' } }, { type: 'text', text: 'yo' }] }, userMsg('again')] }],
  ['block advisor_tool_result', { tools: [{ type: 'advisor_20260301', name: 'advisor', model: 'claude-opus-4-7' }], messages: [userMsg('hi'), { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'advisor', input: {} }, { type: 'advisor_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'advisor_result', text: 'advice' } }] }, userMsg('again')] }], top('thread', { id: 'thr_1' }), top('container', { id: 'container_1' }),
]

const which = process.argv[2]
const filter = process.argv[3]
const up = await startFakeUpstream()
let last: any
up.script((r) => {
  last = r.json()
  if (r.path.includes('/chat/completions')) return { json: fixture('openai/chat/nonstream-text.json') }
  if (r.path.includes('/responses')) return { json: fixture('openai/responses/nonstream-text.json') }
  return { json: fixture('anthropic/messages/nonstream-text.json') }
})
const gw = await startGateway({ env: { OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: 'sk-up', ANTHROPIC_BASE_URL: up.url }, yaml: 'limits:\n  key_rpm: 100000\n  ip_rpm: 100000\n  key_burst_rps: 100000\n', logLevel: 'silent' })
const openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
const anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })

type Send = (model: string, extra: Record<string, unknown>) => Promise<{ headers: Headers }>
const SURFACES: [string, Case[], string[], Send][] = [
  ['chat', CHAT, ['gpt-4.1', 'gpt-5.2', 'claude-sonnet-4-5'], (model, extra) => openai.chat.completions.create({ model, messages: [user('hi')], ...extra } as any).withResponse().then((r) => r.response)],
  ['responses', RESPONSES, ['gpt-4.1', 'gpt-5.2', 'claude-sonnet-4-5'], (model, extra) => openai.responses.create({ model, input: 'hi', ...extra } as any).withResponse().then((r) => r.response)],
  ['messages', MESSAGES, ['claude-sonnet-4-5', 'gpt-4.1', 'gpt-5.2'], (model, extra) => anthropic.messages.create({ model, max_tokens: 100, messages: [userMsg('hi')], ...extra } as any).withResponse().then((r) => r.response)],
  ['messages(beta)', BETA, ['claude-sonnet-4-5', 'gpt-4.1'], (model, extra) => anthropic.beta.messages.create({ model, max_tokens: 100, messages: [userMsg('hi')], ...extra } as any).withResponse().then((r) => r.response)],
]
const family = (m: string) => (m.startsWith('claude') ? 'anthropic' : 'openai')
for (const [surface, cases, models, send] of SURFACES) {
  if (which && !surface.startsWith(which)) continue
  for (const [label, extra, name] of cases) {
    if (filter && !label.includes(filter)) continue
    for (const model of models) {
      last = undefined
      let line: string
      try {
        const res = await send(model, extra)
        const compat = res.headers.get('x-switchyard-compat')
        const own = family(model) === (surface === 'chat' || surface === 'responses' ? 'openai' : 'anthropic')
        const reached = name && last ? (name in last ? `forwarded${process.env.SHOW ? ' ' + JSON.stringify(last[name]) : ''}` : own ? 'NOT FORWARDED' : '') : ''
        line = `ok   ${reached}${compat ? ` compat=${compat}` : ''}`
      } catch (e) {
        const err = e as { status?: number; message?: string }
        line = `${err.status ?? 'ERR'}  ${String(err.message).slice(0, 220)}`
      }
      console.log(`${surface.padEnd(15)} ${label.padEnd(42)} ${model.padEnd(18)} ${line}`)
    }
  }
}
await gw.stop()
await up.stop()
