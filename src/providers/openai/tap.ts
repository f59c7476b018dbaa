// The tap of a relayed OpenAI chat reply: every event the record needs parsed as JSON (valid
// spacing never defeats it), reading the id, usage, finish reason, an in-band error, and the
// text and tool arguments produced (to bill a dropped stream). A plain text chunk after the
// first (most of a stream) has only its text read, without a parse. When the gateway
// forced `include_usage` to bill, the usage the client did not ask for is stripped.
import { eventFields, eventJson, parseJsonObject } from '../../routing/sse-events.ts'
import { closesAfter, occurrences, onlyString, plainEvent } from '../../routing/sse-fast.ts'
import { bytesWithin, closesAfter as closesAfterBytes, found, needle, stringOrNullAt } from '../../routing/sse-bytes.ts'
import { AS_IS, NOT_PLAIN, readPlainEvents } from '../plain-reads.ts'
import type { TapOptions, TapState, WireTap } from '../types.ts'
import { statusRule } from '../errors.ts'
import { withoutSecrets } from '../../lib/secrets.ts'
import { ProducedText } from '../../lib/produced-text.ts'
import { usageFromOpenAI } from './usage.ts'
import { pricedTier } from '../../config/service-tiers.ts'
import { writtenBy } from './compat-fields.ts'

/** OpenAI's in-band error chunk `{error:{message, type, code}}` → the spec status. */
function chunkError(e: Record<string, any>) {
  const code = typeof e.code === 'number' ? e.code : Number(e.status) || 500
  return { status: statusRule(code).status, message: typeof e.message === 'string' ? withoutSecrets(e.message) : 'upstream stream failed', type: typeof e.type === 'string' ? e.type : undefined }
}

/** The usage a chunk carries when the client asked for none: a top-level member, cut out when stripping. */
const NULL_USAGE = ',"usage":null'

/**
 * Where a chunk's `,"usage":null` sits, when that is its one usage and a top-level member (OpenAI
 * sends it on every chunk once usage is asked for, before an `obfuscation` member); -1 when the
 * chunk has no usage; undefined for any other usage.
 */
function nullUsageAt(data: string): number | undefined {
  const usage = occurrences(data, '"usage":')
  if (usage === 0) return -1
  if (usage > 1) return undefined
  const i = data.indexOf(NULL_USAGE)
  if (i === -1) return undefined
  const next = data.charCodeAt(i + NULL_USAGE.length)
  return (next === 44 || next === 125) && closesAfter(data, i + NULL_USAGE.length) === 1 ? i : undefined
}

/**
 * A chunk that carries text and nothing else the record reads — no id yet to take, usage,
 * finish reason, error, refusal or tool call — as compact JSON the way OpenAI sends it: its
 * text ('' for none) and the data as it goes on (`"usage":null` cut when stripping), or
 * undefined for anything else.
 */
export function plainChatChunk(data: string, stripUsage: boolean): { text: string; data: string } | undefined {
  if (data.charCodeAt(0) !== 123 || data.charCodeAt(data.length - 1) !== 125 || !data.includes('"choices":[{')) return undefined
  const usageAt = nullUsageAt(data)
  if (usageAt === undefined) return undefined
  if (occurrences(data, '"finish_reason":') !== occurrences(data, '"finish_reason":null')) return undefined
  if (data.includes('"error"') || data.includes('"tool_calls"') || data.includes('"function_call"')) return undefined
  if (onlyString(data, 'refusal') !== '') return undefined
  // reasoning (DeepSeek's and vLLM's names): read by the parse, which counts it as produced
  if (onlyString(data, 'reasoning_content') !== '' || onlyString(data, 'reasoning') !== '') return undefined
  const text = onlyString(data, 'content')
  if (text === undefined) return undefined
  return { text, data: usageAt >= 0 && stripUsage ? data.slice(0, usageAt) + data.slice(usageAt + NULL_USAGE.length) : data }
}

const B = {
  choices: needle('"choices":[{'),
  usage: needle('"usage":'),
  finish: needle('"finish_reason":'),
  finishNull: needle('"finish_reason":null'),
  error: needle('"error"'),
  toolCalls: needle('"tool_calls"'),
  functionCall: needle('"function_call"'),
  refusal: needle('"refusal":'),
  reasoningContent: needle('"reasoning_content":'),
  reasoning: needle('"reasoning":'),
  content: needle('"content":'),
}
const OPEN = 123
const CLOSE = 125
const COMMA = 44
const QUOTE = 34
const NULL_WORD = needle('null')

/**
 * plainChatChunk over the bytes of the event in `found` (plain-reads.ts): its text left in
 * `found`, and its null usage member to cut when stripping. One pass over the data: every
 * member name it looks for begins with a quote, so each quote is compared with the names that
 * begin with the byte after it. That counts what a search for each name would find (quotes in
 * strings included, as a search sees them), at a tenth of the native calls.
 */
export function plainChatBytes(b: Uint8Array, stripUsage: boolean): number {
  const from = found.dataFrom
  const to = found.dataTo
  if (found.nameFrom !== -1 || b[from] !== OPEN || b[to - 1] !== CLOSE) return NOT_PLAIN
  let choices = false
  let usages = 0
  let usage = -1
  let finishes = 0
  let nullFinishes = 0
  let refusals = 0
  let refusal = -1
  let contents = 0
  let content = -1
  for (let i = from; i < to; i++) {
    if (b[i] !== QUOTE) continue
    switch (b[i + 1]) {
      case 99: // c
        if (bytesWithin(b, B.choices, i, to)) choices = true
        else if (bytesWithin(b, B.content, i, to)) contents++, (content = i)
        break
      case 117: // u
        if (bytesWithin(b, B.usage, i, to)) usages++, (usage = i)
        break
      case 102: // f
        if (bytesWithin(b, B.finish, i, to)) {
          finishes++
          if (bytesWithin(b, B.finishNull, i, to)) nullFinishes++
        } else if (bytesWithin(b, B.functionCall, i, to)) return NOT_PLAIN
        break
      case 101: // e
        if (bytesWithin(b, B.error, i, to)) return NOT_PLAIN
        break
      case 116: // t
        if (bytesWithin(b, B.toolCalls, i, to)) return NOT_PLAIN
        break
      case 114: // r
        if (bytesWithin(b, B.refusal, i, to)) refusals++, (refusal = i)
        // reasoning text (DeepSeek's and vLLM's names) is read by the parse, which counts it
        else if (bytesWithin(b, B.reasoningContent, i, to)) {
          if (!stringOrNullAt(b, i + B.reasoningContent.length, to) || found.textTo !== found.textFrom) return NOT_PLAIN
        } else if (bytesWithin(b, B.reasoning, i, to)) {
          if (!stringOrNullAt(b, i + B.reasoning.length, to) || found.textTo !== found.textFrom) return NOT_PLAIN
        }
        break
    }
  }
  if (!choices || finishes !== nullFinishes || usages > 1 || refusals > 1 || contents > 1) return NOT_PLAIN
  // the one usage must be `,"usage":null`, a top-level member (what closes after it is the chunk's one brace)
  let usageAt = -1
  if (usages === 1) {
    const after = usage + B.usage.length + NULL_WORD.length
    if (b[usage - 1] !== COMMA || usage - 1 < from || !bytesWithin(b, NULL_WORD, usage + B.usage.length, to)) return NOT_PLAIN
    if ((b[after] !== COMMA && b[after] !== CLOSE) || closesAfterBytes(b, after, to) !== 1) return NOT_PLAIN
    usageAt = usage - 1
  }
  // a refusal may only be absent, null or empty; then the text is the content's
  if (refusals === 1 && (!stringOrNullAt(b, refusal + B.refusal.length, to) || found.textTo !== found.textFrom)) return NOT_PLAIN
  if (contents === 0) {
    found.textFrom = found.textTo = 0
    found.escaped = false
  } else if (!stringOrNullAt(b, content + B.content.length, to)) return NOT_PLAIN
  return usageAt >= 0 && stripUsage ? usageAt : AS_IS
}

const plainKept = (b: Uint8Array) => plainChatBytes(b, false)
const plainStripped = (b: Uint8Array) => plainChatBytes(b, true)

/** `tiers`: the upstream is OpenAI's own, whose `service_tier` prices the reply. */
export function openAIChatTap(opts: TapOptions = {}, tiers = false): WireTap {
  const state: TapState = { id: null, usage: null, finishReason: null, done: false, produced: false, error: null }
  const produced = new ProducedText()
  const push = (text: string) => produced.push(text)

  function readChunk(j: Record<string, any>) {
    if (state.id === null && typeof j.id === 'string') state.id = j.id
    // the tier that served it prices the tokens, usage reported or counted (a dropped stream)
    const tier = tiers ? pricedTier(j.service_tier) : undefined
    if (tier) state.serviceTier = tier
    if (j.usage && typeof j.usage === 'object') state.usage = usageFromOpenAI(j.usage, tiers ? j.service_tier : undefined)
    for (const c of Array.isArray(j.choices) ? j.choices : []) {
      const d = c?.delta ?? c?.message ?? {}
      // what the model wrote, reasoning included (billed when a dropped stream has no usage)
      if (writtenBy(d, push)) state.produced = true
      if (typeof c?.finish_reason === 'string') state.finishReason = c.finish_reason
    }
    if (produced.length > 0) state.produced = true
  }

  const plain = opts.stripUsage === true ? plainStripped : plainKept

  return {
    state,
    bytes(b) {
      if (state.id === null) return undefined
      const sent = readPlainEvents(b, produced, plain, NULL_USAGE.length)
      if (sent && produced.length > 0) state.produced = true
      return sent
    },
    event(raw) {
      if (state.id !== null) {
        const p = plainEvent(raw)
        const plain = p && p.event === null ? plainChatChunk(p.data, opts.stripUsage === true) : undefined
        if (plain) {
          if (plain.text !== '') {
            produced.push(plain.text)
            state.produced = true
          }
          return plain.data === p!.data ? raw : `data: ${plain.data}\n\n`
        }
      }
      const { data } = eventFields(raw)
      if (data === null) return raw
      // the end, however spelled after it (`[DONE] `), goes on as the SDKs read it: exactly `[DONE]`
      if (data.startsWith('[DONE]')) {
        state.done = true
        return data === '[DONE]' ? raw : 'data: [DONE]\n\n'
      }
      const j = eventJson(data, state)
      if (!j) return null
      if (j.error && typeof j.error === 'object') {
        state.error = chunkError(j.error)
        // relayed as it came, but never with one of our keys in it
        return withoutSecrets(raw)
      }
      readChunk(j)
      if (!opts.stripUsage || !('usage' in j)) return raw
      if (Array.isArray(j.choices) && j.choices.length === 0) return null
      // Compact JSON as OpenAI sends it: cut the `"usage":null` member without re-encoding.
      // A JSON string cannot hold an unescaped quote, so this literal can only be that member.
      const i = j.usage === null ? raw.indexOf(',"usage":null') : -1
      if (i >= 0 && raw.indexOf(',"usage":null', i + 1) < 0) return raw.slice(0, i) + raw.slice(i + ',"usage":null'.length)
      delete j.usage
      return `data: ${JSON.stringify(j)}\n\n`
    },
    json(text) {
      const j = parseJsonObject(text)
      // an upstream that answers 200 with something else: relayed as is, recorded without usage
      if (!j) return
      readChunk(j)
      state.produced = true
      state.done = true
    },
    producedText: () => produced.text(),
  }
}

/** The prompt of a chat body as text: message contents, tool calls and tool definitions. */
export function chatPromptText(body: Record<string, unknown>): string {
  const parts: string[] = []
  for (const m of Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : []) {
    const c = m?.content
    if (typeof c === 'string') parts.push(c)
    else if (Array.isArray(c)) for (const p of c) if (typeof p?.text === 'string') parts.push(p.text)
    for (const t of Array.isArray(m?.tool_calls) ? (m.tool_calls as Record<string, unknown>[]) : []) parts.push(JSON.stringify(t?.function ?? ''))
  }
  if (Array.isArray(body.tools)) parts.push(JSON.stringify(body.tools))
  return parts.join('\n')
}
