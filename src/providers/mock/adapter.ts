/**
 * The built-in mock provider: deterministic, no network, speaking the same IR as the real
 * adapters so every surface works with it. Its conventions are a stable contract for
 * users' CI (also in docs/mock-provider.md — keep the two in step):
 *
 * - Default: the reply is the text of the last user message. Trailing `system` messages
 *   are ignored (Claude Code sends one after the user turn). A last user message with no text
 *   is said for what it held: `(no text: 1 image)`, `(no text: 2 images, 1 document)`, or
 *   `(no text)` when it holds nothing; with no user message at all, `(no user message)`.
 * - Directives, read only from the last message when it is a user text turn, one per line:
 *   - `mock: text <TEXT>`            reply exactly TEXT.
 *   - `mock: tool <NAME> <JSON>`     call tool NAME with those arguments (default `{}`); NAME
 *                                    must be among the request's tools, else a 400.
 *   - `mock: error <STATUS>`         fail like an upstream answering STATUS, through the same
 *                                    status table as real upstreams (429 → 429 with
 *                                    Retry-After: 1, 500 → 502, 529 → 503, 401 → 502 …).
 *   - `mock: search <QUERY>`         a web search first (the request offering one), told as
 *                                    the model's provider tells it; the text cites it.
 *   - `mock: fail-midstream`         a stream fails with an error event after its first
 *                                    content chunk; a non-streaming call fails with 502.
 * - A forced tool_choice (`required` → the first tool, or a named tool) calls that tool,
 *   with arguments built from its JSON schema so that they validate (schema-args.ts: enum,
 *   const, formats, a common subset of patterns, lengths, bounds, multipleOf, minItems,
 *   maxItems, uniqueItems, required, $ref/$defs, anyOf/oneOf/allOf; bounded in depth and size).
 * - When the last message is a tool result (and no tool is forced): `tool result: <content>`,
 *   one line per result.
 * - Streams come in several chunks: text word by word, tool arguments in three pieces.
 * - Usage is counted with a real tokenizer (o200k): input = the request's system, message
 *   and tool text; output = the reply (a call counts as `NAME ARGUMENTS`). maxTokens is
 *   honoured: the reply is cut to that many tokens and finishes with `length`; a call past it
 *   keeps its name and the arguments up to where the cap falls (none when the name alone
 *   reaches it), finishing with `length`, its usage the cap.
 * - One answer: chat's `n` past 1 is named in x-switchyard-compat as left out.
 * - JSON mode (`json_object`) for a GPT-family model needs the word "json" somewhere in the
 *   request's text (any case), as OpenAI requires: otherwise a 400.
 * - Ids are unique per request (`chatcmpl-mock-…`, or `msg_mock_…` for Claude-family
 *   models; tool calls `call_mock_…` / `toolu_mock_…`); the content is deterministic.
 */
import { collect } from '../../ir/collect.ts'
import { MOCK_SEARCH_ID } from '../../ir/kept-search.ts'
import type { Finish, GenerationRequest, GenerationResponse, StreamEvent, Usage, WebSource } from '../../ir/types.ts'
import { upstreamErrorFrom } from '../errors.ts'
import type { CallContext, ProviderAdapter } from '../types.ts'
import { charBoundary } from '../../lib/chars.ts'
import { checkJsonMode, plan, type Plan } from './script.ts'
import { countTokensAsync, inputTokens, truncateTokensAsync } from './tokens.ts'

const randomId = () => crypto.randomUUID().replaceAll('-', '').slice(0, 24)

/** A text longer than this goes in LONG_CHUNKS deltas of equal size, not a delta a word. */
const LONG_TEXT = 16 * 1024
const LONG_CHUNKS = 1024

/**
 * Text → word-sized deltas (at least two when there are two characters to split); a long text
 * (a prompt of megabytes echoed) in LONG_CHUNKS deltas: a delta a word was millions of events,
 * and the thread held for seconds folding them.
 */
export function textChunks(text: string): string[] {
  if (text.length > LONG_TEXT) return pieces(text, LONG_CHUNKS)
  const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : [])
  if (words.length !== 1 || text.length < 2) return words
  const half = charBoundary(text, Math.ceil(text.length / 2))
  return half === text.length ? [text] : [text.slice(0, half), text.slice(half)]
}


/** `text` in `n` pieces of whole characters and about equal size (fewer when it is shorter). */
function pieces(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n))
  const out: string[] = []
  for (let i = 0; i < text.length; ) {
    const end = Math.min(text.length, charBoundary(text, i + size))
    out.push(text.slice(i, end))
    i = end
  }
  return out
}

/** JSON text → three pieces (fewer when it is shorter). */
export const argumentChunks = (args: string): string[] => pieces(args, 3)

const MIDSTREAM: StreamEvent = { type: 'error', error: { status: 502, message: 'mock: simulated failure after the first chunk', type: 'mock_midstream_failure' } }

async function* events(p: Exclude<Plan, { kind: 'error' }>, req: GenerationRequest, ctx: CallContext): AsyncGenerator<StreamEvent> {
  const claude = ctx.model.family === 'anthropic'
  const usage: Usage = { inputTokens: await inputTokens(req, ctx.lane), outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
  // the prompt's size at the start, as Claude's message_start says it
  yield { type: 'start', id: claude ? `msg_mock_${randomId()}` : `chatcmpl-mock-${randomId()}`, model: ctx.model.upstreamId, created: Math.floor(Date.now() / 1000), usage: { ...usage } }
  const found = p.search !== undefined ? yield* searched(p.search, claude) : undefined
  if (found) usage.webSearches = 1
  if (p.kind === 'tool') {
    const call = await cutCall(p.name, p.arguments, req.maxTokens, ctx.lane)
    yield { type: 'tool-input-start', index: 0, id: claude ? `toolu_mock_${randomId()}` : `call_mock_${randomId()}`, name: p.name }
    for (const [i, delta] of argumentChunks(call.arguments).entries()) {
      yield { type: 'tool-input-delta', index: 0, delta }
      if (i === 0 && p.failMidstream) return yield MIDSTREAM
    }
    yield { type: 'tool-input-end', index: 0 }
    usage.outputTokens = call.tokens
    yield { type: 'finish', finish: call.cut ? { reason: 'length', raw: 'length' } : { reason: 'tool_calls', raw: 'tool_calls' }, usage }
    return
  }
  // a stop sequence ends the text where it first appears (the sequence itself left out), as upstreams do
  const stopped = stopAt(p.text, req.stop)
  const full = stopped ? p.text.slice(0, stopped.at) : p.text
  const { text, cut } = req.maxTokens !== undefined ? await truncateTokensAsync(full, req.maxTokens, ctx.lane) : { text: full, cut: false }
  const chunks = textChunks(text)
  for (const [i, delta] of chunks.entries()) {
    yield { type: 'text-delta', text: delta }
    if (i === 0 && p.failMidstream) return yield MIDSTREAM
  }
  // nothing to say still fails where asked, before its end
  if (chunks.length === 0 && p.failMidstream) return yield MIDSTREAM
  // the text cites what the search found, as Claude's does (its own citation too, for its wire)
  if (found && text !== '') yield { type: 'text-citations', sources: [found], span: text.length, ...(claude ? { providerData: { anthropic: { citations: [claudeCitation(found)] } } } : {}) }
  usage.outputTokens = await countTokensAsync(text, ctx.lane)
  yield { type: 'usage', usage }
  const finish: Finish = cut ? { reason: 'length', raw: 'length' } : stopped ? { reason: 'stop', raw: claude ? 'stop_sequence' : 'stop', stopSequence: stopped.sequence } : { reason: 'stop', raw: 'stop' }
  yield { type: 'finish', finish, usage }
}

/**
 * A web search run for `query`: one result, the same for the same query. For a Claude-family
 * model, as Claude's web search tool tells one, with its blocks (kept for the turn to be sent
 * back, as a real search's are), the page "encrypted" as the query's own base64.
 */
function* searched(query: string, claude: boolean): Generator<StreamEvent, WebSource> {
  const id = claude ? `${MOCK_SEARCH_ID}${randomId()}` : `ws_mock_${randomId()}`
  // (a lone surrogate the client's text may hold has no URL form: it goes as U+FFFD)
  const source = { url: `https://example.com/search?q=${encodeURIComponent(query.toWellFormed())}`, title: `Result for ${query}` }
  yield { type: 'web-search-start', id }
  const result = { type: 'web_search_result', url: source.url, title: source.title, encrypted_content: Buffer.from(query).toString('base64'), page_age: null }
  yield { type: 'web-search-end', id, query, sources: [source], status: 'completed', ...(claude ? { providerData: { anthropic: { input: { query }, content: [result] } } } : {}) }
  return source
}

/** Claude's citation of a web search result: its location, the quoted text (the title here) and its "encrypted" index. */
const claudeCitation = (s: WebSource) => ({ type: 'web_search_result_location', url: s.url, title: s.title ?? '', encrypted_index: Buffer.from(s.url).toString('base64'), cited_text: s.title ?? '' })

/**
 * A call's arguments under the output cap: the call counts as `NAME ARGUMENTS`, and when that
 * passes the cap the arguments stop where the cap falls (none when the name alone reaches it),
 * as a model's call cut by its budget does; the cut spends the whole cap.
 */
async function cutCall(name: string, args: string, max: number | undefined, lane?: string): Promise<{ arguments: string; tokens: number; cut: boolean }> {
  const whole = `${name} ${args}`
  if (max === undefined) return { arguments: args, tokens: await countTokensAsync(whole, lane), cut: false }
  const { text, cut } = await truncateTokensAsync(whole, max, lane)
  if (!cut) return { arguments: args, tokens: await countTokensAsync(whole, lane), cut: false }
  return { arguments: text.slice(name.length + 1), tokens: max, cut: true }
}

/** Where the first of the stop sequences appears in `text`, and which one (the earliest; at one place, the longest). */
function stopAt(text: string, stop: readonly string[] | undefined): { at: number; sequence: string } | undefined {
  let found: { at: number; sequence: string } | undefined
  for (const sequence of stop ?? []) {
    const at = sequence === '' ? -1 : text.indexOf(sequence)
    if (at >= 0 && (!found || at < found.at || (at === found.at && sequence.length > found.sequence.length))) found = { at, sequence }
  }
  return found
}

export class MockAdapter implements ProviderAdapter {
  readonly kind = 'mock' as const
  readonly name = 'mock'

  private planFor(req: GenerationRequest, ctx: CallContext): Exclude<Plan, { kind: 'error' }> {
    // one answer, whatever chat's n asks: named as left out, as an upstream's request names what it drops
    const n = req.providerData?.openai?.n
    if (typeof n === 'number' && n > 1) ctx.leftOut?.(['n'])
    if (ctx.model.family === 'openai') checkJsonMode(req)
    const p = plan(req)
    if (p.kind !== 'error') return p
    throw upstreamErrorFrom({
      provider: 'mock',
      upstreamStatus: p.status,
      bodyText: JSON.stringify({ error: { message: `mock: simulated upstream error ${p.status}`, type: 'mock_error' } }),
      retryAfter: p.status === 429 ? '1' : undefined,
    })
  }

  async stream(req: GenerationRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    return events(this.planFor(req, ctx), req, ctx)
  }

  /** The fold of the stream, so the two can never disagree. */
  async generate(req: GenerationRequest, ctx: CallContext): Promise<GenerationResponse> {
    return collect(events(this.planFor(req, ctx), req, ctx))
  }
}
