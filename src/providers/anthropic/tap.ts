// The tap of a relayed Anthropic messages reply: each event parsed as JSON, reading the id
// (message_start), usage (message_start, then message_delta's cumulative counts), the
// stop reason, an in-band `error` event, the code execution container it ran in (message_start,
// message_delta), and the text, thinking and tool input produced (to bill a dropped stream). A plain content_block_delta (most of a
// stream) has only its text read, without a parse. Nothing is rewritten.
import { own } from '../../lib/own.ts'
import { eventFields, eventJson, parseJsonObject, stillOpening } from '../../routing/sse-events.ts'
import { jsonStringAt, occurrences, onlyString, plainEvent } from '../../routing/sse-fast.ts'
import { anthropicEventError } from '../errors.ts'
import { ProducedText } from '../../lib/produced-text.ts'
import { AS_IS, NOT_PLAIN, readPlainEvents } from '../plain-reads.ts'
import { bytesAt, countIn, found, indexIn, needle, onlyStringIn } from '../../routing/sse-bytes.ts'
import type { TapState, WireTap } from '../types.ts'
import type { ContainerGiven } from '../../routing/contract.ts'
import { tellContainer } from './container.ts'
import { overwriteUsage, usageFromAnthropic } from './usage.ts'
import { withoutSecrets } from '../../lib/secrets.ts'

const DELTA_TEXT: Record<string, string> = { text_delta: 'text', thinking_delta: 'thinking', input_json_delta: 'partial_json' }

/** A message's opening events: they say nothing of whether the upstream serves (relay.ts holds them). */
const OPENING: ReadonlySet<string> = new Set(['message_start', 'content_block_start'])

const BLOCK_DELTA = '{"type":"content_block_delta",'
const DELTA_TYPE = '"delta":{"type":"'

/**
 * The text of a content_block_delta in the shape Anthropic sends (compact JSON, the event's
 * type first, one delta of a known kind): '' when it carries none; undefined for anything else.
 */
export function plainBlockDelta(data: string): string | undefined {
  if (!data.startsWith(BLOCK_DELTA) || occurrences(data, '"type":') !== 2) return undefined
  const at = data.indexOf(DELTA_TYPE)
  if (at < 0) return undefined
  const kind = jsonStringAt(data, at + DELTA_TYPE.length)?.value
  const field = kind === undefined ? undefined : own(DELTA_TEXT, kind)
  return field ? onlyString(data, field) : undefined
}

const B = {
  blockDelta: needle(BLOCK_DELTA),
  type: needle('"type":'),
  deltaType: needle(DELTA_TYPE),
  name: needle('content_block_delta'),
  /** each kind of delta, its closing quote, and the member that holds its text */
  kinds: Object.entries(DELTA_TEXT).map(([kind, field]) => [needle(kind + '"'), needle(`"${field}":`)] as const),
}

/** plainBlockDelta over the bytes of the event in `found` (plain-reads.ts), its text left there. */
export function plainBlockDeltaBytes(b: Uint8Array): number {
  const from = found.dataFrom
  const to = found.dataTo
  if (found.nameFrom !== -1 && !(found.nameTo - found.nameFrom === B.name.length && bytesAt(b, B.name, found.nameFrom))) return NOT_PLAIN
  if (!bytesAt(b, B.blockDelta, from) || countIn(b, B.type, from, to) !== 2) return NOT_PLAIN
  const at = indexIn(b, B.deltaType, from, to)
  if (at === -1) return NOT_PLAIN
  for (const [kind, field] of B.kinds) if (bytesAt(b, kind, at + B.deltaType.length)) return onlyStringIn(b, field, from, to) ? AS_IS : NOT_PLAIN
  return NOT_PLAIN
}

/** `given`: told of the code execution container the reply says it ran in (container.ts). */
export function anthropicMessagesTap(provider = 'anthropic', given?: ContainerGiven): WireTap {
  const state: TapState = { id: null, usage: null, finishReason: null, done: false, produced: false, error: null }
  const produced = new ProducedText()

  function readBlock(b: Record<string, any> | undefined) {
    if (!b) return
    if (typeof b.text === 'string' && b.text) produced.push(b.text)
    if (typeof b.thinking === 'string' && b.thinking) produced.push(b.thinking)
    if (b.type === 'tool_use' || b.type === 'server_tool_use') {
      if (typeof b.name === 'string') produced.push(b.name)
      if (b.input && Object.keys(b.input).length) produced.push(JSON.stringify(b.input))
      state.produced = true
    }
    if (produced.length) state.produced = true
  }

  return {
    state,
    bytes(b) {
      const sent = readPlainEvents(b, produced, plainBlockDeltaBytes)
      if (sent) state.opening = false
      if (sent && produced.length > 0) state.produced = true
      return sent
    },
    event(raw) {
      const p = plainEvent(raw)
      const text = p && (p.event === null || p.event === 'content_block_delta') ? plainBlockDelta(p.data) : undefined
      if (text !== undefined) {
        state.opening = false
        if (text !== '') {
          produced.push(text)
          state.produced = true
        }
        return raw
      }
      const { event, data } = eventFields(raw)
      // a ping is a ping whatever its data (the SDK skips it)
      if (data === null || event === 'ping') return raw
      const j = eventJson(data, state)
      const type = j?.type ?? event
      // the message's opening (its start, a block's start with nothing in it yet) says nothing of
      // whether the upstream serves: Claude says overloaded_error in band right after it. Any
      // other event decides, one that is no JSON too (one with no data says nothing, as a ping)
      if (data.trim() !== '') state.opening = stillOpening(state, j, type, OPENING)
      if (!j) return null
      switch (type) {
        case 'message_start':
          state.id = typeof j.message?.id === 'string' ? j.message.id : state.id
          state.usage = usageFromAnthropic(j.message?.usage)
          tellContainer(j.message?.container, given)
          break
        case 'content_block_start':
          readBlock(j.content_block)
          if (state.produced) state.opening = false
          break
        case 'content_block_delta': {
          const field = own(DELTA_TEXT, j.delta?.type)
          const v = field ? j.delta[field] : undefined
          if (typeof v === 'string' && v !== '') {
            produced.push(v)
            state.produced = true
          }
          break
        }
        case 'message_delta':
          state.usage = overwriteUsage(state.usage ?? usageFromAnthropic(undefined), j.usage)
          if (typeof j.delta?.stop_reason === 'string') state.finishReason = j.delta.stop_reason
          tellContainer(j.delta?.container, given)
          break
        case 'message_stop':
          state.done = true
          break
        case 'error':
          state.error = anthropicEventError(provider, j.error).info
          // relayed as it came, but never with one of our keys in it
          return withoutSecrets(raw)
      }
      return raw
    },
    json(text) {
      const j = parseJsonObject(text)
      if (!j) return
      if (typeof j.id === 'string') state.id = j.id
      state.usage = usageFromAnthropic(j.usage)
      state.finishReason = typeof j.stop_reason === 'string' ? j.stop_reason : null
      tellContainer(j.container, given)
      for (const b of Array.isArray(j.content) ? j.content : []) readBlock(b)
      state.produced = true
      state.done = true
    },
    producedText: () => produced.text(),
  }
}
