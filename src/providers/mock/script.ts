// What the mock answers, decided from the request alone (pure). The conventions are
// documented in adapter.ts and docs/mock-provider.md.
import type { GenerationRequest, Message, Part } from '../../ir/types.ts'
import { badRequest, checkToolChoice } from '../checks.ts'
import { crowdedHidden, hiddenBounds, parseHidden } from '../../http/hidden-json.ts'
import { exampleFromSchema } from './schema-args.ts'
import { offersSearch } from '../anthropic/web-search.ts'
import { carriedClaudeFormat } from '../../routing/translate.ts'

/** `search`: a web search run first, for this query (the text cites what it found). */
export type Plan =
  | { kind: 'text'; text: string; failMidstream: boolean; search?: string }
  | { kind: 'tool'; name: string; arguments: string; failMidstream: boolean; search?: string }
  | { kind: 'error'; status: number }

const DIRECTIVE = /^\s*mock:\s*(text|tool|error|search|fail-midstream)\b[ \t]?(.*)$/

export interface Directives {
  text?: string
  tool?: { name: string; args: string }
  error?: string
  search?: string
  failMidstream: boolean
}

/** Lines of the form `mock: <verb> …` anywhere in the message; the first of each verb counts. */
export function parseDirectives(text: string): Directives {
  const d: Directives = { failMidstream: false }
  // any line break a text may hold: a lone CR, or a line or paragraph separator, ends a directive too
  for (const line of text.split(/\r\n|[\r\n\u2028\u2029]/)) {
    const m = DIRECTIVE.exec(line)
    if (!m) continue
    const [, verb, rest] = m
    if (verb === 'fail-midstream') d.failMidstream = true
    else if (verb === 'text') d.text ??= rest
    else if (verb === 'error') d.error ??= rest.trim()
    else if (verb === 'search') d.search ??= rest.trim()
    else if (!d.tool) {
      const t = /^(\S+)\s*(.*)$/.exec(rest.trim())
      d.tool = { name: t?.[1] ?? '', args: t?.[2]?.trim() || '{}' }
    }
  }
  return d
}

const textOf = (parts: Part[]) => parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n')

function toolResults(m: Message): string[] {
  return m.content.flatMap((p) => (p.type === 'tool-result' ? [typeof p.content === 'string' ? p.content : textOf(p.content)] : []))
}

/** Any text the request holds: its system text, its messages' text and their tool results'. */
function* texts(req: GenerationRequest): Generator<string> {
  for (const p of req.system ?? []) if (p.type === 'text') yield p.text
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'text') yield p.text
      else if (p.type === 'tool-result') yield typeof p.content === 'string' ? p.content : textOf(p.content)
    }
  }
}

/**
 * OpenAI answers JSON mode (`json_object`, without a schema) only when the conversation asks for
 * JSON in words, so the model is not left to emit whitespace for ever; the mock standing in for
 * a GPT model refuses it the same way, so a pipeline on the mock does not pass what OpenAI refuses.
 */
export function checkJsonMode(req: GenerationRequest): void {
  if (req.responseFormat?.type !== 'json_object') return
  for (const t of texts(req)) if (/json/i.test(t)) return
  throw badRequest("the messages must contain the word 'json' in some form to use a response format of type json_object (response_format, text.format), as OpenAI requires")
}

export function plan(req: GenerationRequest): Plan {
  checkToolChoice(req)
  // Trailing system messages (Claude Code sends one after the user turn) are not the turn to answer.
  const turns = req.messages.filter((m) => m.role !== 'system')
  const last = turns[turns.length - 1]
  const results = last ? toolResults(last) : []
  const lastUser = [...turns].reverse().find((m) => m.role === 'user')
  const d = results.length === 0 && last?.role === 'user' ? parseDirectives(textOf(last.content)) : { failMidstream: false } as Directives

  if (d.error !== undefined) {
    const status = /^\d{3}$/.test(d.error) ? Number(d.error) : NaN
    if (!(status >= 400 && status <= 599)) throw badRequest(`mock: error needs an HTTP status from 400 to 599, got "${d.error}"`)
    return { kind: 'error', status }
  }
  const search = searchOf(d, req)
  const p = answer(req, d, results, lastUser, search)
  return search === undefined ? p : { ...p, search }
}

/** The query of a `mock: search` line, where the request offers a web search; else a 400 saying what is missing. */
function searchOf(d: Directives, req: GenerationRequest): string | undefined {
  if (d.search === undefined) return undefined
  if (d.search === '') throw badRequest('mock: search needs a query: `mock: search <QUERY>`')
  if (!offersSearch(req)) {
    throw badRequest("mock: search needs the request to offer a web search: the Responses `web_search` tool, chat's `web_search_options`, or (for a Claude-family model) Anthropic's `web_search_…` tool")
  }
  return d.search
}

/** What the reply says or calls (a search the plan runs first aside): the directives, a forced tool, a format, else the echo. */
function answer(req: GenerationRequest, d: Directives, results: string[], lastUser: Message | undefined, search: string | undefined): Exclude<Plan, { kind: 'error' }> {
  if (d.tool) {
    if (!(req.tools ?? []).some((t) => t.name === d.tool!.name)) {
      throw badRequest(`mock: tool "${d.tool.name}" is not among the request's tools (${(req.tools ?? []).map((t) => t.name).join(', ') || 'none'})`)
    }
    if (req.toolChoice?.type === 'none') throw badRequest(`mock: tool ${d.tool.name}: the request's tool_choice is none, under which no model calls a tool`)
    // the client's JSON in its prompt, parsed under a body's rules (hidden-json.ts)
    const parsed = parseHidden(d.tool.args, hiddenBounds())
    if ('crowded' in parsed) throw badRequest(`mock: tool ${d.tool.name}: arguments hold ${crowdedHidden}`)
    if ('broken' in parsed) throw badRequest(`mock: tool ${d.tool.name}: arguments: ${parsed.broken}`)
    if ('malformed' in parsed) throw badRequest(`mock: tool ${d.tool.name}: arguments are not valid JSON: ${d.tool.args}`)
    const args = parsed.value
    // a tool's arguments are an object on every surface (a messages block's `input` is one)
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw badRequest(`mock: tool ${d.tool.name}: arguments must be a JSON object, got ${d.tool.args}`)
    return { kind: 'tool', name: d.tool.name, arguments: d.tool.args, failMidstream: d.failMidstream }
  }
  if (d.text !== undefined) return { kind: 'text', text: d.text, failMidstream: d.failMidstream }
  const c = req.toolChoice
  if (c?.type === 'required' || c?.type === 'tool') {
    const tool = c.type === 'tool' ? req.tools!.find((t) => t.name === c.name)! : req.tools![0]
    return { kind: 'tool', name: tool.name, arguments: JSON.stringify(exampleFromSchema(tool.parameters)), failMidstream: d.failMidstream }
  }
  // a reply held to JSON is JSON: built from the schema, as a forced call's arguments are
  const rf = req.responseFormat ?? carriedClaudeFormat(req.providerData?.anthropic?.output_config)
  if (rf?.type === 'json_schema') return { kind: 'text', text: JSON.stringify(exampleFromSchema(rf.schema ?? {})), failMidstream: d.failMidstream }
  if (rf?.type === 'json_object') return { kind: 'text', text: '{}', failMidstream: d.failMidstream }
  if (results.length) return { kind: 'text', text: results.map((r) => `tool result: ${r}`).join('\n'), failMidstream: false }
  // a search with nothing else asked says what it looked for (the echo would be the directive)
  return { kind: 'text', text: search !== undefined ? `Results for ${search}.` : echo(lastUser), failMidstream: d.failMidstream }
}

/** How a part with no text is named when the default reply says what a message held. */
const PART_NAMES: Record<string, string> = { image: 'image', document: 'document', 'tool-result': 'tool result', 'tool-call': 'tool call', reasoning: 'reasoning part' }

/**
 * The default reply: the last user message's text. A message with none (an image alone, empty
 * content) is said for what it held — `(no text: 1 image)`, `(no text)` — never an earlier
 * message's text, and never empty (an SDK's helpers take an empty reply for none).
 */
export function echo(m: Message | undefined): string {
  if (!m) return '(no user message)'
  const text = textOf(m.content)
  if (text !== '') return text
  const counts = new Map<string, number>()
  for (const p of m.content) if (p.type !== 'text') counts.set(p.type, (counts.get(p.type) ?? 0) + 1)
  if (counts.size === 0) return '(no text)'
  const held = [...counts].map(([type, n]) => `${n} ${PART_NAMES[type] ?? type}${n === 1 ? '' : 's'}`)
  return `(no text: ${held.join(', ')})`
}
