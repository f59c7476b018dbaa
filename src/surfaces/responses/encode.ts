// The Response object (OpenAI's shape) and the gateway's extras:
// `requires_action` with `required_action.submit_tool_outputs.tool_calls` when the model
// called tools, `incomplete_details` when a budget cut the output, and `reasoning.summaries`
// holding the summary text. `completeResponse` adds the extras to any Response object —
// one built here from the IR, or one an OpenAI upstream sent (the pass-through path).
import type { Finish, FinishReason, GenerationResponse, Part, UrlCitation, Usage } from '../../ir/types.ts'
import { promptTokens } from '../../ir/types.ts'
import { customInputOf } from '../custom-tools.ts'
import type { Item } from './items.ts'
import { reasoningItem, searchReasoningItem } from './reasoning.ts'
import { holdSearch } from './held-search.ts'
import { itemId } from './item-ids.ts'
import type { Member } from './namespaces.ts'
import type { ResponsesTool } from './tools.ts'
import type { Turn } from './validate.ts'

type Obj = Record<string, unknown>

export function responsesUsage(u: Usage): Obj {
  const input = promptTokens(u)
  return {
    input_tokens: input,
    // OpenAI's own since its cache writes are counted: a Claude model's show here (Codex reads them)
    input_tokens_details: { cached_tokens: u.cacheReadTokens, cache_write_tokens: u.cacheWriteTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: input + u.outputTokens,
  }
}

/**
 * The IR finish → the response status and its incomplete_details (every reason
 * explicit; one the table does not know is never a silent `completed`). OpenAI documents two
 * incomplete reasons, `max_output_tokens` and `content_filter`, and typed clients (the openai
 * SDK's types, Codex) know no other: Claude's full context window and its pause_turn (a server
 * tool loop stopped at its iteration budget, to be continued) are budgets that cut the turn, so
 * they say `max_output_tokens`, as chat says `length` for them. Only a reason the gateway does not
 * know shows its raw value, which says more than a guess would.
 */
const STATUS: Record<FinishReason, { status: string; reason?: string }> = {
  stop: { status: 'completed' },
  // a reply that called tools is made `requires_action` by completeResponse
  tool_calls: { status: 'completed' },
  length: { status: 'incomplete', reason: 'max_output_tokens' },
  context_exceeded: { status: 'incomplete', reason: 'max_output_tokens' },
  content_filter: { status: 'incomplete', reason: 'content_filter' },
  refusal: { status: 'incomplete', reason: 'content_filter' },
  pause: { status: 'incomplete', reason: 'max_output_tokens' },
  error: { status: 'failed' },
  other: { status: 'incomplete' },
}

/**
 * A budget ran out while the model wrote: the item it was writing (the last) was cut short, and
 * says `incomplete`, as OpenAI marks it (a call cut so has arguments that are not whole JSON).
 */
export const cutShort = (f: Finish): boolean => f.reason === 'length' || f.reason === 'context_exceeded'

export function statusOf(f: Finish): { status: string; incomplete?: Obj } {
  const s = STATUS[f.reason] ?? STATUS.other
  if (s.status !== 'incomplete') return { status: s.status }
  return { status: s.status, incomplete: { reason: s.reason ?? f.raw ?? 'unknown' } }
}

export function messageItem(id: string, text: string, status = 'completed', annotations: Obj[] = []): Item {
  return { id, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text, annotations, logprobs: [] }] }
}

/** A cited source as OpenAI's web search shows one: a url_citation over characters of the output text (`offset`: where the part's text begins in it). */
export function urlAnnotation(c: UrlCitation, offset = 0): Obj {
  return { type: 'url_citation', start_index: offset + c.start, end_index: offset + c.end, url: c.url, title: c.title ?? '' }
}

/**
 * A web search the upstream ran (a Claude model's) as OpenAI shows its own: a web_search_call
 * whose action says the query, and the sources it found where the request asked for them
 * (`include: ["web_search_call.action.sources"]`, as OpenAI gives them); its status, how it ended.
 */
export function webSearchItem(id: string, p: Extract<Part, { type: 'web-search' }>, sources: boolean): Item {
  const action: Obj = { type: 'search', query: p.query }
  if (sources) action.sources = p.sources.map((s) => ({ type: 'url', url: s.url }))
  const item: Item = { id, type: 'web_search_call', status: p.status, action }
  // what it found goes with the item into the thread, not to the client (held-search.ts)
  holdSearch(item, p)
  return item
}

/**
 * How the request is shown a web search: with its sources on its item where it asked for them
 * (`include: ["web_search_call.action.sources"]`), and a Claude search's blocks sealed in a
 * reasoning item after it where the client keeps the conversation itself and carries sealed
 * reasoning back (`store: false` and `include: ["reasoning.encrypted_content"]`, as Codex sends).
 */
export interface SearchView {
  sources: boolean
  sealed: boolean
}

/** `include` names `what` (a list, or one name alone, as the surface takes it). */
const includes = (body: Obj, what: string): boolean => (Array.isArray(body.include) ? body.include.includes(what) : body.include === what)

export const searchViewOf = (f: Pick<ResponseFrame, 'body' | 'turn'>): SearchView => ({
  sources: includes(f.body, 'web_search_call.action.sources'),
  sealed: !f.turn.store && includes(f.body, 'reasoning.encrypted_content'),
})

/** A tool call → a function_call item, or a custom_tool_call for a custom tool (its one string input unwrapped). */
export function callItem(id: string, callId: string, name: string, args: string, custom: boolean, status = 'completed', namespace?: string): Item {
  const ns = namespace === undefined ? {} : { namespace }
  if (custom) return { id, type: 'custom_tool_call', status, call_id: callId, name, ...ns, input: customInputOf(args) }
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name, ...ns }
}

/** The name and namespace a call the model made by `name` is shown under: a namespace member's own, with its namespace. */
export function calledAs(f: Pick<ResponseFrame, 'members'>, name: string): { name: string; namespace?: string } {
  return f.members?.get(name) ?? { name }
}

/** The per-request facts an encoded Response echoes. */
export interface ResponseFrame {
  id: string
  model: string
  createdAt: number
  turn: Turn
  body: Obj
  /** A reply that called tools says `requires_action` (the spec's) or `completed` (OpenAI's). */
  toolCallsStatus?: 'requires_action' | 'completed'
  /** The tools offered for namespaces' members, by the name the model calls them by (namespaces.ts). */
  members?: Map<string, Member>
}

/**
 * The turn's tools as the Response echoes them. A function tool names whether it was strict, as
 * OpenAI's echo always does (its schema requires it): here what the translation applied, strict
 * only where the client asked (decode.ts), so one sent without `strict` is echoed `false`.
 */
function echoedTools(tools: ResponsesTool[]): ResponsesTool[] {
  const loose = (t: ResponsesTool) => t.type === 'function' && t.strict === undefined
  return tools.some(loose) ? tools.map((t) => (loose(t) ? { ...t, strict: false } : t)) : tools
}

/** The Response object's fixed fields (everything but output, status and usage). */
export function responseShell(f: ResponseFrame, status: string): Obj {
  const { turn, body } = f
  return {
    id: f.id,
    object: 'response',
    created_at: f.createdAt,
    status,
    background: false,
    // which OpenAI access program served the reply: none here (the SDK declares it on every Response)
    access_programs: null,
    error: null,
    incomplete_details: null,
    instructions: turn.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: turn.maxToolCalls ?? null,
    model: f.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls !== false,
    previous_response_id: turn.previousResponseId ?? null,
    // the Conversations API's conversation the turn ran in (its items were added to it)
    ...(turn.conversationId !== undefined ? { conversation: { id: turn.conversationId } } : {}),
    reasoning: { effort: turn.effort ?? null, summary: turn.summary ?? null },
    store: turn.store,
    temperature: body.temperature ?? 1,
    text: { format: turn.format ?? { type: 'text' }, ...(turn.verbosity ? { verbosity: turn.verbosity } : {}) },
    tool_choice: turn.toolChoice ?? 'auto',
    tools: echoedTools(turn.tools),
    top_p: body.top_p ?? 1,
    truncation: typeof body.truncation === 'string' ? body.truncation : 'disabled',
    usage: null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  }
}

/**
 * Adds the spec's extras to a finished Response object (mutates and returns it):
 * `output_text`, `reasoning.summaries`, and for a reply that called tools the
 * `requires_action` status with its `required_action`.
 */
export function completeResponse(r: Obj, toolCallsStatus: 'requires_action' | 'completed' = 'requires_action'): Obj {
  const output = Array.isArray(r.output) ? (r.output as Obj[]) : []
  const texts: string[] = []
  const summaries: Obj[] = []
  const calls: Obj[] = []
  for (const it of output) {
    if (it?.type === 'message' && Array.isArray(it.content)) for (const c of it.content as Obj[]) if (c?.type === 'output_text' && typeof c.text === 'string') texts.push(c.text)
    if (it?.type === 'reasoning' && Array.isArray(it.summary)) for (const s of it.summary as Obj[]) if (typeof s?.text === 'string') summaries.push({ type: 'summary_text', text: s.text })
    if (it?.type === 'function_call') calls.push({ id: it.call_id, type: 'function', function: { name: it.name, arguments: it.arguments } })
    if (it?.type === 'custom_tool_call') calls.push({ id: it.call_id, type: 'function', function: { name: it.name, arguments: JSON.stringify({ input: it.input }) } })
  }
  r.output_text = texts.join('')
  const reasoning = typeof r.reasoning === 'object' && r.reasoning !== null ? (r.reasoning as Obj) : {}
  r.reasoning = { ...reasoning, summaries }
  if (calls.length > 0 && r.status === 'completed') {
    r.required_action = { type: 'submit_tool_outputs', submit_tool_outputs: { tool_calls: calls } }
    if (toolCallsStatus === 'requires_action') r.status = 'requires_action'
  }
  return r
}

/**
 * IR content → output items, in the order the model produced them (at most `maxToolCalls` calls);
 * `cut`: the last part was cut short (cutShort), and its item is `incomplete`.
 */
export function outputItems(content: Part[], turn: Turn, customTools: Set<string>, responseId: string, members?: Map<string, Member>, cut = false, searches: SearchView = { sources: false, sealed: false }): Item[] {
  const out: Item[] = []
  const id = (prefix: string) => itemId(prefix, responseId, out.length)
  let calls = 0
  /** The item the last part went to (none when a call past the cap was left out). */
  let shown: Item | undefined
  for (const p of content) {
    shown = out[out.length - 1]
    if (p.type === 'text') {
      const part = shown?.type === 'message' ? ((shown.content as Obj[])[0] as { text: string; annotations: Obj[] }) : undefined
      const offset = part?.text.length ?? 0
      const annotations = (p.citations ?? []).map((c) => urlAnnotation(c, offset))
      if (part) {
        part.text += p.text
        part.annotations.push(...annotations)
      } else out.push(messageItem(id('msg'), p.text, 'completed', annotations))
    } else if (p.type === 'reasoning') {
      out.push(reasoningItem(id('rs'), p, turn.summary !== undefined))
      // redacted thinking comes whole, never cut (as the stream says)
      if (p.redacted !== undefined) {
        shown = undefined
        continue
      }
    } else if (p.type === 'web-search') {
      out.push(webSearchItem(id('ws'), p, searches.sources))
      const sealed = searches.sealed ? searchReasoningItem(id('rs'), p) : undefined
      if (sealed) out.push(sealed)
    } else if (p.type === 'tool-call') {
      if (turn.maxToolCalls !== undefined && calls >= turn.maxToolCalls) {
        shown = undefined
        continue
      }
      calls++
      const as = calledAs({ members }, p.name)
      out.push(callItem(id(customTools.has(p.name) ? 'ctc' : 'fc'), p.id, as.name, p.arguments, customTools.has(p.name), 'completed', as.namespace))
    }
    shown = out[out.length - 1]
  }
  // a custom tool's call stays `completed`, as the stream says it (finalCall in stream.ts)
  if (cut && shown && shown.type !== 'custom_tool_call') shown.status = 'incomplete'
  return out
}

/** A whole IR response → the completed Response object. */
export function encodeResponse(r: GenerationResponse, f: ResponseFrame, customTools: Set<string>): Obj {
  const { status, incomplete } = statusOf(r.finish)
  const out = responseShell(f, status)
  out.output = outputItems(r.content, f.turn, customTools, f.id, f.members, cutShort(r.finish), searchViewOf(f))
  if (incomplete) out.incomplete_details = incomplete
  out.usage = responsesUsage(r.usage)
  return completeResponse(out, f.toolCallsStatus)
}
