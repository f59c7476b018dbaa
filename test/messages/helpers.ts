// Shared by the messages codec unit tests: the surface's steps without HTTP (normalize →
// resolve model → check → family rules → IR), so each case can assert the 400 and the
// field its message names.
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
import { HttpError } from '../../src/http/errors.ts'
import { resolveModel } from '../../src/routing/router.ts'
import { applyFamilyRules, type CrossFamilyMode } from '../../src/routing/params.ts'
import { PARAMS } from '../../src/surfaces/messages/params.ts'
import { messagesToIR } from '../../src/surfaces/messages/params.ts'
import { normalizeMessagesBody, validateMessages } from '../../src/surfaces/messages/validate.ts'

export const catalog = buildCatalog(loadConfig({ env: {}, cwd: '/' }))

export function decode(raw: unknown, mode: CrossFamilyMode = 'reject') {
  const body = normalizeMessagesBody(raw)
  const model = resolveModel(catalog, body.model, 'messages')
  validateMessages(body, model)
  const rules = applyFamilyRules(body, PARAMS, model.family, mode, model.id)
  return { body, model, rules, ir: messagesToIR(body, model, rules) }
}

/** The 400 message `raw` gets; fails the test when it is accepted or not a 400. */
export function rejection(raw: unknown, mode: CrossFamilyMode = 'reject'): string {
  try {
    decode(raw, mode)
  } catch (e) {
    if (e instanceof HttpError && e.status === 400) return e.message
    throw e
  }
  throw new Error(`accepted: ${JSON.stringify(raw).slice(0, 200)}`)
}

export const CLAUDE = 'claude-sonnet-4-5'
export const GPT = 'gpt-4o'

/** A minimal valid body for `model`, with `over` merged in. */
export function body(over: Record<string, unknown> = {}, model = CLAUDE): Record<string, unknown> {
  return { model, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }], ...over }
}

/** The request Claude Code 2.x sends, trimmed to its shape. */
export const CLAUDE_CODE_BODY = {
  model: CLAUDE,
  max_tokens: 32_000,
  stream: true,
  thinking: { type: 'adaptive', display: 'omitted' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'medium' },
  metadata: { user_id: JSON.stringify({ device_id: 'd', account_uuid: '', session_id: 's' }) },
  system: [
    { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330.fc3; cc_entrypoint=sdk-cli;' },
    { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
  ],
  tools: [
    { name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' } },
    { name: 'ToolSearch', description: 'Find tools', input_schema: { type: 'object', properties: { query: { type: 'string' } } } },
    { name: 'DeferredToolPlaceholder', description: 'later', input_schema: { type: 'object', properties: {} }, defer_loading: true },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'mock: tool Bash {"command":"echo sy-ok"}' }] },
    { role: 'system', content: [{ type: 'text', text: '<env>cwd: /tmp</env>', cache_control: { type: 'ephemeral' } }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'echo sy-ok' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'sy-ok', cache_control: { type: 'ephemeral' } }] },
  ],
}
