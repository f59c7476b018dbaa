// The tap of a relayed OpenAI Responses reply: each event parsed as JSON, reading the id,
// usage, status, an in-band failure, the code interpreter containers its items hand the client,
// and the text produced (to bill a dropped stream); a plain
// delta event (most of a stream) has only its text read, without a parse. The
// final response — the JSON reply, or the terminal event's — goes through the surface's
// `finalize`, which completes it, and the frames that end the stream are the surface's
// (`terminal`): the events the gateway adds around a completion or a failure are its to say.
import { eventFields, eventJson, parseJsonObject, stillOpening } from '../../routing/sse-events.ts'
import { jsonStringAt, occurrences, onlyString, plainEvent } from '../../routing/sse-fast.ts'
import type { TapOptions, TapState, WireTap } from '../types.ts'
import type { Usage } from '../../ir/types.ts'
import { statusRule } from '../errors.ts'
import { withoutSecrets } from '../../lib/secrets.ts'
import { own } from '../../lib/own.ts'
import { ProducedText } from '../../lib/produced-text.ts'
import { pricedTier } from '../../config/service-tiers.ts'
import { saidServed } from '../../ir/served.ts'
import { cacheWrites } from './usage.ts'
import { countOf } from '../counts.ts'
import { toolUsageOf } from './tool-usage.ts'
import { AS_IS, NOT_PLAIN, plainEventsRead, readPlainEvents } from '../plain-reads.ts'
import { bytesAt, countIn, found, needle, onlyStringIn } from '../../routing/sse-bytes.ts'

type Obj = Record<string, any>

/** Responses usage → IR disjoint buckets: input_tokens includes the cached ones and those written to the cache. */
export function usageFromResponses(u: Obj | null | undefined): Usage {
  const input = countOf(u?.input_tokens) ?? 0
  const cached = Math.min(countOf(u?.input_tokens_details?.cached_tokens) ?? 0, input)
  const written = cacheWrites(u?.input_tokens_details?.cache_write_tokens, input - cached)
  const out: Usage = { inputTokens: Math.max(0, input - cached - written), outputTokens: countOf(u?.output_tokens) ?? 0, cacheReadTokens: cached, cacheWriteTokens: written }
  const reasoning = countOf(u?.output_tokens_details?.reasoning_tokens)
  if (reasoning !== undefined) out.reasoningTokens = reasoning
  return out
}

/**
 * An in-band error's status, by its code or type (OpenAI sends no status with it): quota and
 * rate errors are 429s and an overloaded server a 503, each tried elsewhere; a request the model
 * refused (`invalid_request_error`; a prompt past the context window, `context_length_exceeded`,
 * comes in band after `response.in_progress`) is the client's 400, which rests no deployment;
 * anything else is the upstream's 500 (or the status it gave).
 */
const KIND_STATUS: Record<string, number> = { insufficient_quota: 429, rate_limit_exceeded: 429, server_is_overloaded: 503, context_length_exceeded: 400, invalid_request_error: 400 }

function errorInfo(e: Obj | undefined) {
  const kind = typeof e?.code === 'string' ? e.code : typeof e?.type === 'string' ? e.type : undefined
  const status = own(KIND_STATUS, e?.code) ?? own(KIND_STATUS, e?.type) ?? statusRule(typeof e?.status === 'number' ? e.status : 500).status
  return { status, message: typeof e?.message === 'string' ? withoutSecrets(e.message) : 'upstream response failed', type: kind }
}

/** The snapshots a stream opens with before the model has begun: they do not commit it (pipeline/relay.ts). */
const OPENING = new Set(['response.created', 'response.in_progress'])

/** The events whose only news for the record is a piece of produced text in `delta`. */
const DELTAS = new Set(['response.output_text.delta', 'response.function_call_arguments.delta', 'response.reasoning_summary_text.delta', 'response.custom_tool_call_input.delta'])
const TYPE_FIRST = '{"type":"'

/**
 * The `delta` text of a delta event in the shape OpenAI sends (compact JSON, its type first
 * and once, one string `delta`): '' for a null one; undefined for any other event or shape.
 */
export function plainResponsesDelta(data: string): string | undefined {
  if (!data.startsWith(TYPE_FIRST) || occurrences(data, '"type":') !== 1) return undefined
  const type = jsonStringAt(data, TYPE_FIRST.length)?.value
  return type !== undefined && DELTAS.has(type) ? onlyString(data, 'delta') : undefined
}

const B = {
  typeFirst: needle(TYPE_FIRST),
  type: needle('"type":'),
  delta: needle('"delta":'),
  /** each delta event's type with its closing quote */
  deltas: [...DELTAS].map((t) => needle(t + '"')),
}

/** plainResponsesDelta over the bytes of the event in `found` (plain-reads.ts), its text left there. */
export function plainResponsesDeltaBytes(b: Uint8Array): number {
  const from = found.dataFrom
  const to = found.dataTo
  if (!bytesAt(b, B.typeFirst, from) || countIn(b, B.type, from, to) !== 1) return NOT_PLAIN
  for (const t of B.deltas) if (bytesAt(b, t, from + B.typeFirst.length)) return onlyStringIn(b, B.delta, from, to) ? AS_IS : NOT_PLAIN
  return NOT_PLAIN
}

const frame = (type: string, event: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, ...event })}\n\n`

/** `tiers`: the upstream is OpenAI's own, whose `service_tier` prices the reply. */
export function openAIResponsesTap(opts: TapOptions = {}, tiers = false): WireTap {
  const state: TapState = { id: null, usage: null, finishReason: null, done: false, produced: false, error: null, status: null }
  const produced = new ProducedText()
  let pendingError: ReturnType<typeof errorInfo> | null = null
  const hooks = opts.responses
  // the number of the last event relayed: the last one read, and the deltas relayed unread since
  // (OpenAI numbers its events one by one), for the events a failure adds after them
  let lastRead = -1
  let unreadSince = 0
  const lastSequence = () => lastRead + unreadSince

  /** A code interpreter call's container, handed to the client (in an item, or the final output). */
  const container = (it: Obj | undefined) => {
    if (it?.type === 'code_interpreter_call' && typeof it.container_id === 'string' && it.container_id !== '') opts.containerGiven?.(it.container_id)
  }

  /** The final response, completed; a failed one does not end the stream properly (the relay fails it). */
  function final(r: Obj): Obj {
    if (opts.containerGiven && Array.isArray(r.output)) for (const it of r.output as Obj[]) container(it)
    const done = hooks ? hooks.finalize(r) : r
    if (typeof done.id === 'string') state.id = done.id
    if (done.usage) {
      state.usage = usageFromResponses(done.usage)
      const tier = tiers ? pricedTier(done.service_tier) : undefined
      if (tier) state.usage.serviceTier = state.serviceTier = tier
      if (tiers) state.usage = saidServed(state.usage, 'serviceTier', done.service_tier)
      // the searches and images its hosted tools made, priced apart from its tokens
      Object.assign(state.usage, toolUsageOf(done))
    }
    state.status = typeof done.status === 'string' ? done.status : null
    state.finishReason = state.status
    state.done = state.status !== 'failed'
    return done
  }

  return {
    state,
    bytes(b) {
      const sent = readPlainEvents(b, produced, plainResponsesDeltaBytes)
      // a delta, even an empty one, is output begun
      if (sent) {
        state.produced = true
        state.opening = false
        unreadSince += plainEventsRead()
      }
      return sent
    },
    event(raw) {
      const p = plainEvent(raw)
      const delta = p ? plainResponsesDelta(p.data) : undefined
      if (delta !== undefined) {
        if (delta !== '') produced.push(delta)
        state.produced = true
        state.opening = false
        unreadSince++
        return raw
      }
      const { data } = eventFields(raw)
      if (data === null) return raw
      const j = eventJson(data, state)
      // any event but an opening snapshot decides the stream (one that is no JSON too)
      state.opening = stillOpening(state, j, j?.type, OPENING)
      if (!j) return null
      if (typeof j.type !== 'string') return raw
      // Recordings from before sequence numbers existed have none: then neither do added events.
      const seq = typeof j.sequence_number === 'number' ? j.sequence_number : undefined
      if (seq !== undefined) {
        lastRead = seq
        unreadSince = 0
      } else unreadSince++
      switch (j.type) {
        case 'response.created':
        case 'response.in_progress':
        case 'response.queued':
          if (typeof j.response?.id === 'string') state.id = j.response.id
          // the tier asked for (a stream dropped before its end is billed at it; the end says the one served)
          if (tiers && !state.usage) state.serviceTier = pricedTier(j.response?.service_tier) ?? state.serviceTier
          if (!j.response) return raw
          {
            const shown = hooks?.opened?.(j.response)
            hooks?.observe?.(shown ?? j.response, seq ?? 0, lastSequence)
            return shown ? frame(j.type, { ...j, response: shown }) : raw
          }
        case 'response.output_item.added':
          state.produced = true
          container(j.item)
          return raw
        case 'response.output_item.done':
          if (j.item && typeof j.item === 'object' && Number.isInteger(j.output_index)) hooks?.itemDone?.(j.item, j.output_index)
          container(j.item)
          return raw
        case 'response.output_text.delta':
        case 'response.function_call_arguments.delta':
        case 'response.reasoning_summary_text.delta':
        case 'response.custom_tool_call_input.delta':
          if (typeof j.delta === 'string') produced.push(j.delta)
          state.produced = true
          return raw
        case 'error':
          pendingError = state.errorSaid = errorInfo(j.error ?? j)
          // relayed as it came, but never with one of our keys in it
          return withoutSecrets(raw)
        case 'response.failed': {
          state.error = pendingError ?? errorInfo(j.response?.error)
          const r = final({ ...j.response, status: 'failed' })
          return withoutSecrets(raw) + (hooks ? hooks.terminal(j.type, { ...j, response: r }, seq) : '')
        }
        case 'response.completed':
        case 'response.incomplete': {
          const event = { ...j, response: final(j.response ?? {}) }
          return hooks ? hooks.terminal(j.type, event, seq) : frame(j.type, event)
        }
        default:
          return raw
      }
    },
    rewritesJson: true,
    json(text) {
      const j = parseJsonObject(text)
      if (!j) return
      state.produced = true
      return JSON.stringify(final(j))
    },
    producedText: () => produced.text(),
  }
}

/** The prompt of a Responses body as text: instructions, input items and tool definitions. */
export function responsesPromptText(body: Obj): string {
  const parts: string[] = []
  if (typeof body.instructions === 'string') parts.push(body.instructions)
  const input = body.input
  if (typeof input === 'string') parts.push(input)
  else if (Array.isArray(input)) {
    for (const it of input as Obj[]) {
      const c = it?.content ?? it?.output ?? it?.arguments
      if (typeof c === 'string') parts.push(c)
      else if (Array.isArray(c)) for (const p of c as Obj[]) if (typeof p?.text === 'string') parts.push(p.text)
    }
  }
  if (Array.isArray(body.tools)) parts.push(JSON.stringify(body.tools))
  return parts.join('\n')
}
