// IR → messages-style wire: ids, the stop-reason table, usage, content blocks and the
// Anthropic Message reply. Pure.
import type { Finish, FinishReason, GenerationResponse, Part, Usage } from '../../ir/types.ts'
import { anthropicSearchBlocks, keptBlocks } from '../../ir/kept-search.ts'

/**
 * A reply id as a messages client expects it: `msg_…`. An upstream's own `msg_` id is kept;
 * any other (`chatcmpl-…`, `gen-…`) becomes `msg_` + its letters and digits, so the same
 * id always maps to the same one and the record can store the id the client saw.
 */
export function messagesId(id: string): string {
  if (id.startsWith('msg_')) return id
  const alnum = id.replace(/[^a-zA-Z0-9]/g, '')
  return 'msg_' + (alnum || crypto.randomUUID().replaceAll('-', '').slice(0, 24))
}

/**
 * IR finish reason → `stop_reason` (every reason explicit).
 * - `content_filter` → `refusal`: output withheld for policy reasons is Anthropic's refusal.
 * - `error` → `end_turn`: a finished stream never carries it (errors are error events), and
 *   the folded reply of a failed stream is an error, not a Message.
 * - `other` → the upstream's raw reason as it is, as the chat encoder does: a reason this
 *   gateway does not know yet (a new Anthropic one, say) reaches the client instead of
 *   being disguised as `end_turn`; only when there is none at all (a stream that finished
 *   without saying why) is it `end_turn`. The raw reason is in the record either way.
 */
const STOP_REASON: Record<FinishReason, string | null> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  refusal: 'refusal',
  pause: 'pause_turn',
  context_exceeded: 'model_context_window_exceeded',
  error: 'end_turn',
  other: null,
}

export function messagesStopReason(f: Finish): string {
  // A matched stop sequence is Anthropic's `stop_sequence`, with the sequence set.
  if (f.reason === 'stop' && f.stopSequence) return 'stop_sequence'
  if (f.reason === 'stop' && f.raw === 'stop_sequence') return 'stop_sequence'
  return STOP_REASON[f.reason] ?? (f.raw || 'end_turn')
}

/** `stop_sequence` is set only with a `stop_sequence` stop reason. */
export function messagesStopSequence(f: Finish): string | null {
  return messagesStopReason(f) === 'stop_sequence' ? (f.stopSequence ?? null) : null
}

export interface MessagesUsage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  server_tool_use?: { web_search_requests: number }
  output_tokens_details?: { thinking_tokens: number }
}

/**
 * The counters (`message_delta`'s usage): the IR buckets are disjoint already, input_tokens
 * excludes cache reads and writes. Searches only when some ran, as Anthropic sends them.
 */
export function messagesUsage(u: Usage): MessagesUsage {
  const out: MessagesUsage = {
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cacheReadTokens,
  }
  if (u.webSearches) out.server_tool_use = { web_search_requests: u.webSearches }
  // the upstream's reasoning count where it gave one (thinking tokens are Anthropic's name for it)
  if (u.reasoningTokens !== undefined) out.output_tokens_details = { thinking_tokens: u.reasoningTokens }
  return out
}

/**
 * A Message's own usage (the reply's and `message_start`'s), with the fields Anthropic's API
 * sends there beside the counters, which the SDK's types declare present: the cache writes by
 * lifetime, the reasoning tokens and server tool uses where counted, and the service tier,
 * inference region and speed, which are Anthropic's and unknown (`null`) for a reply this
 * gateway made from another upstream's or the mock's.
 */
export function messageUsage(u: Usage): Record<string, unknown> {
  const hour = Math.min(u.cacheWrite1hTokens ?? 0, u.cacheWriteTokens)
  const counters = messagesUsage(u)
  return {
    ...counters,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWriteTokens - hour, ephemeral_1h_input_tokens: hour },
    output_tokens_details: counters.output_tokens_details ?? null,
    server_tool_use: counters.server_tool_use ?? null,
    // the beta usage's per-iteration (compaction) counts: no compaction ran here
    iterations: null,
    service_tier: null,
    inference_geo: null,
    speed: null,
  }
}

/**
 * `stop_details`: what Anthropic says of a refusal (its category and explanation, which no
 * other upstream gives: `null`), and `null` for every other stop.
 */
export function messagesStopDetails(stopReason: string): Record<string, unknown> | null {
  return stopReason === 'refusal' ? { type: 'refusal', category: null, explanation: null } : null
}

/** Tool arguments as the `input` object: the model's JSON text parsed; `{}` when empty or not an object. */
export function toolInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {}
  try {
    const v = JSON.parse(args)
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>
  } catch {}
  // Not an object: the Messages wire cannot say it otherwise; keep the text rather than lose it.
  return { _raw_arguments: args }
}

/**
 * A web search Claude ran, as Anthropic's wire says it: its server_tool_use and its result (the
 * pages encrypted, for Claude to read when the turn is sent back), as Claude sent them. One
 * without them (a paused turn's, whose result never came) has no faithful form and gives none.
 */
export function searchBlocks(p: Extract<Part, { type: 'web-search' }>): Record<string, unknown>[] {
  const kept = keptBlocks(p)
  return kept ? anthropicSearchBlocks(kept) : []
}

/**
 * One IR output part → one content block; parts with no Messages form give none. A GPT model's
 * url_citation annotations have no faithful form here and are left out: Anthropic's
 * `web_search_result_location` requires the quoted text of the page (`cited_text`), which OpenAI
 * does not give (its indices point into the model's own text), and an `encrypted_index` that only
 * Anthropic makes, for Claude to read when the turn is sent back. A web search is two blocks
 * (searchBlocks).
 */
export function contentBlock(p: Part): Record<string, unknown> | undefined {
  switch (p.type) {
    case 'text': {
      // Claude's own citations, as it sent them (a GPT model's annotations have no faithful form: above)
      const cited = p.providerData?.anthropic?.citations
      return Array.isArray(cited) ? { type: 'text', text: p.text, citations: cited } : { type: 'text', text: p.text }
    }
    case 'tool-call':
      return { type: 'tool_use', id: p.id, name: p.name, input: toolInput(p.arguments) }
    case 'reasoning':
      // The signature and redacted data go out exactly as received.
      if (p.redacted !== undefined) return { type: 'redacted_thinking', data: p.redacted }
      // Unsigned and empty: nothing to show and nothing to echo (the stream encoder skips it too).
      if (p.text === '' && !p.signature) return undefined
      return { type: 'thinking', thinking: p.text, signature: p.signature ?? '' }
    default:
      return undefined
  }
}

/** The Anthropic Message reply. `model`: as the upstream named it (the id asked for where it named none). */
export function encodeMessagesResponse(r: GenerationResponse, model: string): Record<string, unknown> {
  const content: Record<string, unknown>[] = []
  for (const p of r.content) {
    // An empty text part (e.g. OpenAI `content: ""` beside tool calls) is no block.
    if (p.type === 'text' && p.text === '') continue
    if (p.type === 'web-search') {
      content.push(...searchBlocks(p))
      continue
    }
    const b = contentBlock(p)
    if (b) content.push(b)
  }
  return {
    id: messagesId(r.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: messagesStopReason(r.finish),
    stop_sequence: messagesStopSequence(r.finish),
    stop_details: messagesStopDetails(messagesStopReason(r.finish)),
    // declared on every Message by the SDK (context_management on the beta one): no container
    // tool ran here, no diagnostics were asked, no context was edited
    container: null,
    diagnostics: null,
    context_management: null,
    usage: messageUsage(r.usage),
  }
}
