// IR stream events → responses-style SSE: response.created, response.in_progress,
// then every output item bracketed by output_item.added/.done (message items also by
// content_part.added/.done; reasoning items by the summary-part events when summaries are
// on), and a terminal response.completed carrying the whole response — preceded by
// response.requires_action when the reply called tools — or response.incomplete when a
// budget cut it. A failure is response.error, response.failed, then response.completed
// with status failed. Claude and GPT models share this grammar on the IR path.
import { emptyUsage, type StreamEvent, type Usage } from '../../ir/types.ts'
import { ProducedText } from '../../lib/produced-text.ts'
import type { MidStreamError } from '../../pipeline/reply.ts'
import { itemId } from './item-ids.ts'
import { callItem, calledAs, completeResponse, cutShort, messageItem, responseShell, responsesUsage, searchViewOf, statusOf, urlAnnotation, webSearchItem, type ResponseFrame } from './encode.ts'
import type { Item } from './items.ts'
import { reasoningItem, searchReasoningItem } from './reasoning.ts'

/** Web searches of a reply kept open for their end (an upstream runs a few; its max_uses bounds them). */
const SEARCHES_KEPT = 64

type Obj = Record<string, unknown>

export function sse(type: string, payload: Obj): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`
}

/**
 * A failure: response.error, response.failed, then response.completed with status failed. For a
 * client that knows only OpenAI's events, the error event has OpenAI's name (`error`).
 */
export function failureEvents(ev: (type: string, payload: Obj) => string, error: { code: string; message: string }, r: Obj, knownEventsOnly: boolean): string {
  const first = knownEventsOnly ? ev('error', { code: error.code, message: error.message, param: null }) : ev('response.error', { error: { ...error, type: error.code } })
  return first + ev('response.failed', { response: r }) + ev('response.completed', { response: r })
}

interface Open {
  index: number
  item: Item
  kind: 'text' | 'reasoning' | 'tool'
  /**
   * The item's text so far, for its done events. Kept as UTF-8 in one buffer: a string grown by
   * `+=` is a rope of one node a delta beside the delta itself, about four times the text's
   * size held for the item's whole life (13 KiB against 4 for 200 deltas).
   */
  text: ProducedText
  signature?: string
  redacted?: string
  custom?: boolean
  /** A text delta's JSON from its item id to its text, made at the item's first delta. */
  deltaHead?: string
  /** A message's characters so far, and the url_citation annotations on them. */
  chars?: number
  annotations?: Obj[]
}

export interface ResponsesStreamState {
  id: string
  usage: Usage
  finishReason: string | null
  status: string | null
  produced: boolean
  done: boolean
}

export interface ResponsesStreamEncoder {
  readonly state: ResponsesStreamState
  push(ev: StreamEvent): string
  /** The in-band end of a failed stream: response.error, response.failed, response.completed (failed). */
  failure(e: unknown): string
}

/**
 * `onFinal` sees the finished response before its terminal event is written: the thread is
 * stored by then.
 */
export function createResponsesStreamEncoder(f: ResponseFrame, customTools: Set<string>, onFinal: (r: Obj) => void, knownEventsOnly = false): ResponsesStreamEncoder {
  const state: ResponsesStreamState = { id: f.id, usage: emptyUsage(), finishReason: null, status: null, produced: false, done: false }
  const output: Item[] = []
  const skipped = new Set<number>()
  const tools = new Map<number, Open>()
  /** Web searches begun and not yet ended, by the upstream's id: their place in the output. */
  const searches = new Map<string, number>()
  const searchView = searchViewOf(f)
  let seq = 0
  let open: Open | undefined
  let calls = 0
  const summaries = f.turn.summary !== undefined
  /**
   * The done events of the item ended last, written with the next event: a budget's finish, which
   * comes after the item's end, makes them say the item was cut (`incomplete`).
   */
  let held: ((status: string) => string) | undefined
  /** Done frames released by an event whose encoding then threw: the failure sends them. */
  let unsent = ''
  const release = (status = 'completed'): string => {
    const h = held
    held = undefined
    return h ? h(status) : ''
  }

  const ev = (type: string, payload: Obj) => sse(type, { sequence_number: seq++, ...payload })
  const snapshot = (status: string): Obj => ({ ...responseShell(f, status), output: [...output] })

  function add(kind: Open['kind'], item: Item): [Open, string] {
    const o: Open = { index: output.length, item, kind, text: new ProducedText() }
    output.push(item)
    return [o, ev('response.output_item.added', { output_index: o.index, item })]
  }
  function done(o: Open, item: Item): string {
    output[o.index] = item
    return ev('response.output_item.done', { output_index: o.index, item })
  }
  const at = (o: Open) => ({ item_id: o.item.id, output_index: o.index })

  function finalText(o: Open, status: string): string {
    const text = o.text.text()
    const part = { type: 'output_text', text, annotations: o.annotations ?? [], logprobs: [] }
    return (
      ev('response.output_text.done', { ...at(o), content_index: 0, text, logprobs: [] }) +
      ev('response.content_part.done', { ...at(o), content_index: 0, part }) +
      done(o, messageItem(o.item.id as string, text, status, o.annotations))
    )
  }
  function finalReasoning(o: Open, status: string): string {
    const text = o.text.text()
    const item = reasoningItem(o.item.id as string, { type: 'reasoning', text, signature: o.signature, redacted: o.redacted }, summaries)
    let s = ''
    if (summaries) {
      s += ev('response.reasoning_summary_text.done', { ...at(o), summary_index: 0, text })
      s += ev('response.reasoning_summary_part.done', { ...at(o), summary_index: 0, part: { type: 'summary_text', text } })
    }
    return s + done(o, status === 'completed' ? item : { ...item, status })
  }
  function finalCall(o: Open, status: string): string {
    // a custom tool's call stays `completed` (uncut): the Vercel AI SDK takes no other status for one
    const item = callItem(o.item.id as string, o.item.call_id as string, o.item.name as string, o.text.text() || '{}', o.custom === true, o.custom ? 'completed' : status, o.item.namespace as string | undefined)
    if (o.custom) {
      return ev('response.custom_tool_call_input.delta', { ...at(o), delta: item.input }) + ev('response.custom_tool_call_input.done', { ...at(o), input: item.input }) + done(o, item)
    }
    return ev('response.function_call_arguments.done', { ...at(o), name: item.name, arguments: item.arguments }) + done(o, item)
  }

  /**
   * The output of a stream cut mid-item: the items still open hold what was sent of them (a
   * message's text so far, a call's arguments so far), `incomplete`, as their deltas showed.
   */
  function cut(): Item[] {
    const out = [...output]
    if (open?.kind === 'text') out[open.index] = messageItem(open.item.id as string, open.text.text(), 'incomplete', open.annotations)
    if (open?.kind === 'reasoning') out[open.index] = { ...reasoningItem(open.item.id as string, { type: 'reasoning', text: open.text.text() }, summaries), status: 'incomplete' }
    for (const i of searches.values()) out[i] = { ...out[i]!, status: 'incomplete' }
    for (const o of tools.values()) {
      out[o.index] = callItem(o.item.id as string, o.item.call_id as string, o.item.name as string, o.text.text(), o.custom === true, 'incomplete', o.item.namespace as string | undefined)
    }
    return out
  }

  function finish(status: string, incomplete: Obj | undefined): string {
    const r = snapshot(status)
    if (incomplete) r.incomplete_details = incomplete
    r.usage = responsesUsage(state.usage)
    completeResponse(r, f.toolCallsStatus)
    state.status = r.status as string
    state.finishReason = state.status
    onFinal(r)
    state.done = true
    if (r.status === 'requires_action' && !knownEventsOnly) return ev('response.requires_action', { response: r }) + ev('response.completed', { response: r })
    if (r.status === 'incomplete') return ev('response.incomplete', { response: r })
    return ev('response.completed', { response: r })
  }

  /** A text or reasoning block ends: its done frames are held (`held`) for the next event. */
  function blockEnd(cut: boolean | undefined, kind: 'text' | 'reasoning'): string {
    // cut by the failure: left open, for the failed response to hold as incomplete
    if (cut) return ''
    const o = open
    open = undefined
    if (o?.kind === kind) held = (status) => (kind === 'text' ? finalText(o, status) : finalReasoning(o, status))
    return ''
  }

  /** One event's frames (the done events of an item that ends are held: `held`). */
  function encode(e: StreamEvent): string {
    switch (e.type) {
      case 'start':
        return ev('response.created', { response: snapshot('in_progress') }) + ev('response.in_progress', { response: snapshot('in_progress') })
      case 'text-start': {
        const [o, s] = add('text', { id: itemId('msg', f.id, output.length), type: 'message', status: 'in_progress', role: 'assistant', content: [] })
        open = o
        return s + ev('response.content_part.added', { ...at(o), content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } })
      }
      case 'text-delta':
        if (!open || open.kind !== 'text' || e.text === '') return ''
        open.text.push(e.text)
        open.chars = (open.chars ?? 0) + e.text.length
        state.produced = true
        // most of a stream: the bytes `ev` would write, without the objects
        open.deltaHead ??= `,"item_id":${JSON.stringify(open.item.id)},"output_index":${open.index},"content_index":0,"delta":`
        return `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${seq++}${open.deltaHead}${JSON.stringify(e.text)},"logprobs":[]}\n\n`
      case 'text-end':
        return blockEnd(e.cut, 'text')
      case 'text-citations': {
        if (!open || open.kind !== 'text') return ''
        const o = open
        const end = o.chars ?? 0
        const citations = e.sources.map((s) => urlAnnotation({ ...s, start: Math.max(0, end - e.span), end }))
        const first = (o.annotations ??= []).length
        o.annotations.push(...citations)
        return citations.map((annotation, i) => ev('response.output_text.annotation.added', { ...at(o), content_index: 0, annotation_index: first + i, annotation })).join('')
      }
      case 'reasoning-start': {
        const [o, s] = add('reasoning', { id: itemId('rs', f.id, output.length), type: 'reasoning', summary: [] })
        open = o
        return s + (summaries ? ev('response.reasoning_summary_part.added', { ...at(o), summary_index: 0, part: { type: 'summary_text', text: '' } }) : '')
      }
      case 'reasoning-delta':
        if (!open || open.kind !== 'reasoning') return ''
        open.text.push(e.text)
        state.produced = true
        return summaries && e.text ? ev('response.reasoning_summary_text.delta', { ...at(open), summary_index: 0, delta: e.text }) : ''
      case 'reasoning-signature':
        if (open?.kind === 'reasoning') open.signature = e.signature
        return ''
      case 'reasoning-redacted': {
        const [o, s] = add('reasoning', { id: itemId('rs', f.id, output.length), type: 'reasoning', summary: [] })
        o.redacted = e.data
        return s + done(o, reasoningItem(o.item.id as string, { type: 'reasoning', text: '', redacted: e.data }, false))
      }
      case 'reasoning-end':
        return blockEnd(e.cut, 'reasoning')
      // OpenAI's own: the item added in progress, said searching, then completed with its action
      case 'web-search-start': {
        const [o, s] = add('tool', { id: itemId('ws', f.id, output.length), type: 'web_search_call', status: 'in_progress' })
        state.produced = true
        if (searches.size < SEARCHES_KEPT) searches.set(e.id, o.index)
        return s + ev('response.web_search_call.in_progress', at(o)) + ev('response.web_search_call.searching', at(o))
      }
      case 'web-search-end': {
        const index = searches.get(e.id)
        if (index === undefined) return ''
        searches.delete(e.id)
        const { type: _, ...search } = e
        const part = { type: 'web-search' as const, ...search }
        const item = webSearchItem(output[index]!.id as string, part, searchView.sources)
        output[index] = item
        const where = { item_id: item.id, output_index: index }
        const s = (item.status === 'completed' ? ev('response.web_search_call.completed', where) : '') + ev('response.output_item.done', { output_index: index, item })
        // its blocks, for a client that keeps the conversation itself: an item of their own after it
        const sealed = searchView.sealed ? searchReasoningItem(itemId('rs', f.id, output.length), part) : undefined
        if (!sealed) return s
        const [o, added] = add('reasoning', sealed)
        return s + added + done(o, sealed)
      }
      case 'tool-input-start': {
        if (f.turn.maxToolCalls !== undefined && calls >= f.turn.maxToolCalls) {
          skipped.add(e.index)
          return ''
        }
        calls++
        state.produced = true
        const custom = customTools.has(e.name)
        const as = calledAs(f, e.name)
        const item = callItem(itemId(custom ? 'ctc' : 'fc', f.id, output.length), e.id, as.name, '', custom, 'in_progress', as.namespace)
        const [o, s] = add('tool', item)
        o.custom = custom
        tools.set(e.index, o)
        return s
      }
      case 'tool-input-delta': {
        const o = tools.get(e.index)
        if (!o || skipped.has(e.index)) return ''
        o.text.push(e.delta)
        // A custom tool's input is its arguments' one string, known once they are whole.
        return o.custom || e.delta === '' ? '' : ev('response.function_call_arguments.delta', { ...at(o), delta: e.delta })
      }
      case 'tool-input-end': {
        const o = tools.get(e.index)
        if (!o) return ''
        tools.delete(e.index)
        held = (status) => finalCall(o, status)
        return ''
      }
      case 'usage':
        state.usage = e.usage
        return ''
      case 'finish': {
        state.usage = e.usage
        const { status, incomplete } = statusOf(e.finish)
        return finish(status, incomplete)
      }
      case 'error':
        // Written by failure(), which the pipeline calls with the error that ends the stream.
        return ''
    }
  }

  return {
    state,
    push(e: StreamEvent): string {
      // An event's numbers are its frames' once they are all made: a throw part way loses them,
      // so it gives the numbers back, and the failure's events go on from the last frame sent.
      // The done frames of the item ended before it are whole, and kept with their numbers for
      // the failure to send first.
      let first = seq
      try {
        // usage says nothing of the held item (Claude's comes between a block's end and the finish)
        if (e.type === 'usage' || e.type === 'error') return encode(e)
        const ended = release(e.type === 'finish' && cutShort(e.finish) ? 'incomplete' : 'completed')
        if (ended) {
          unsent = ended
          first = seq
        }
        const out = ended + encode(e)
        unsent = ''
        return out
      } catch (err) {
        seq = first
        throw err
      }
    },
    failure(e: unknown): string {
      if (state.done) return ''
      // an item that ended before the failure is whole
      const ended = unsent + release()
      unsent = ''
      const err = e as MidStreamError
      const error = { code: err?.type ?? 'server_error', message: err?.message ?? 'stream failed' }
      const r = snapshot('failed')
      r.output = cut()
      r.error = error
      r.usage = responsesUsage(state.usage)
      state.status = 'failed'
      state.finishReason = 'failed'
      state.done = true
      return ended + failureEvents(ev, error, r, knownEventsOnly)
    },
  }
}
