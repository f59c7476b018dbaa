// The pass-through path: an upstream that speaks the surface's own wire answers, and its
// reply goes back as it came — JSON whole, SSE event by event as the bytes arrive — through
// the tap of that wire (beside its adapter), which reads id, usage and finish for the record.
import { bodyPrefix } from '../http/body-prefix.ts'
import { firstEventFailure } from '../ir/errors.ts'
import { errorSaid, notAReplyError } from '../providers/errors.ts'
import { replyText } from '../providers/reply-text.ts'
import type { Watch } from '../providers/idle.ts'
import type { CallContext, Passthrough, TapOptions, WireTap } from '../routing/contract.ts'
import { EventSplitter } from '../routing/sse-events.ts'
import { wholeLfEvents } from '../routing/sse-bytes.ts'
import type { GenerationOutcome } from './outcome.ts'
import { failureOf, midStreamFailure, MidStreamError, type JsonReply } from './reply.ts'
import { sseBody, SSE_HEADERS, type SseOptions } from './sse.ts'

/**
 * A tap reads the reply for the record (and on the responses wire completes it); it never costs
 * the client the reply. One that throws is logged once and from then on the upstream's bytes go
 * on as they came (the record keeps what the tap had read). A class: one object a call, its
 * methods shared.
 */
export class GuardedTap implements WireTap {
  private failed = false
  readonly rewritesJson: boolean | undefined

  constructor(
    private readonly tap: WireTap,
    private readonly onError: (e: unknown) => void,
  ) {
    this.rewritesJson = tap.rewritesJson
  }

  get state() {
    return this.tap.state
  }

  get broken(): boolean {
    return this.failed
  }

  producedText() {
    return this.tap.producedText()
  }

  /** A tap with no read of bytes, or a broken one, leaves every read to the text way. */
  bytes(b: Uint8Array): Uint8Array | undefined {
    if (this.failed || !this.tap.bytes) return undefined
    try {
      return this.tap.bytes(b)
    } catch (e) {
      this.fail(e)
      return undefined
    }
  }

  event(raw: string) {
    if (this.failed) return raw
    try {
      return this.tap.event(raw)
    } catch (e) {
      this.fail(e)
      return raw
    }
  }

  json(text: string) {
    if (this.failed) return
    try {
      return this.tap.json(text)
    } catch (e) {
      this.fail(e)
    }
  }

  private fail(e: unknown) {
    if (!this.failed) this.onError(e)
    this.failed = true
  }
}

const ignore = () => {}

function noteTap(tap: WireTap, out: GenerationOutcome, reply?: string) {
  out.reply = reply
  if (tap.state.id) out.id = tap.state.id
  if (tap.state.usage) out.usage = tap.state.usage
  else if (tap.state.serviceTier) out.usage = { ...out.usage, serviceTier: tap.state.serviceTier }
  out.finishReason = tap.state.finishReason
  if (tap.state.status !== undefined) out.status = tap.state.status
}

export interface RelayInput {
  pt: Passthrough
  body: Record<string, unknown>
  tapOptions?: TapOptions
  ctx: CallContext
  out: GenerationOutcome
  headers: Record<string, string>
  /** A tap that threw (logged; the reply goes on as the upstream sent it). */
  onTapError?: (e: unknown) => void
}

export async function relayJson({ pt, body, tapOptions, ctx, out, headers, onTapError }: RelayInput): Promise<JsonReply> {
  // On the request path a tap that only reads (chat, messages) reads the reply after it is
  // handed over, and the record is made then; a tap that may complete it (responses), and a
  // batch item, which reads its records as soon as it has the reply, read it first.
  // A failure before the upstream answered is thrown unrecorded: the caller may try another
  // deployment, and records the generation when it gives up (generate.ts).
  out.promptText = () => pt.promptText(body)
  const { text, status, tap, unread } = await pt.call(body, ctx, async (res) => {
    const tap = new GuardedTap(pt.tap(tapOptions), onTapError ?? ignore)
    const text = await replyText(res)
    notAReply(res, text)
    if (tap.rewritesJson || !out.defersRecord) return { text: tap.json(text) ?? text, status: res.status, tap, unread: false }
    return { text, status: res.status, tap, unread: true }
  })
  let after: (() => void) | undefined
  try {
    out.firstToken()
    await tapOptions?.responses?.durable?.()
    out.end()
    if (!unread) noteTap(tap, out, text)
    else
      after = () => {
        tap.json(text)
        noteTap(tap, out, text)
      }
    return { status, body: text, headers }
  } catch (e) {
    throw failureOf(e, out)
  } finally {
    if (after) out.recordAfter(after)
    else out.record()
  }
}

const STREAM = { stream: true }
const LF = 10

/**
 * One relayed stream's reads, each to the frames it sends on. A read of whole events that the tap
 * can read where they lie (its `bytes`) goes on as it came; any other is decoded, split into
 * events and read as text. Only a read that begins an event may go the first way, so the text way
 * must have nothing pending: no part of an event, no part of a character.
 */
export class EventReads {
  private readonly split = new EventSplitter()
  private readonly dec = new TextDecoder()
  private aligned = true
  /** The last read ended in a CR: whether it was a line's end or a CRLF's start, the next read tells. */
  private cr = false
  /** Whether the last read completed an event. */
  completed = false

  constructor(readonly tap: GuardedTap) {}

  read(value: Uint8Array): string | Uint8Array {
    if (this.aligned && wholeLfEvents(value)) {
      const sent = this.tap.bytes(value)
      if (sent !== undefined) {
        this.completed = true
        return sent
      }
    }
    const events = this.split.push(this.lines(this.dec.decode(value, STREAM)))
    const n = value.length
    this.aligned = this.split.empty && n >= 2 && value[n - 1] === LF && value[n - 2] === LF
    this.completed = events.length > 0
    return pass(this.tap, events)
  }

  /**
   * A line may end in CR alone (SSE allows CRLF, LF or CR; no real upstream sends a bare CR):
   * such a CR is read as LF, so that the events split where the client's parser splits them. A CR
   * that ends a read waits for the next, which may begin with the LF of its CRLF.
   */
  private lines(text: string, last = false): string {
    if (this.cr) {
      text = '\r' + text
      this.cr = false
    }
    if (!text.includes('\r')) return text
    if (!last && text.endsWith('\r')) {
      this.cr = true
      text = text.slice(0, -1)
    }
    return text.replace(/\r(?!\n)/g, '\n')
  }

  /**
   * What is left when the upstream closes, read as the last event (undefined for nothing), ended
   * with its blank line: a client's parser only dispatches an event that has one.
   */
  end(): string | undefined {
    // (a CR the last read held may complete an event)
    const events = this.split.push(this.lines(this.dec.decode(), true))
    const rest = this.split.rest()
    if (rest.trim() !== '') events.push(rest.replace(/[\r\n]*$/, '\n\n'))
    return events.length === 0 ? undefined : pass(this.tap, events)
  }
}

interface Committed {
  reads: EventReads
  reader: ReadableStreamDefaultReader<Uint8Array>
  firstFrames: string | Uint8Array
  /** Held to the provider's timeout between two reads, from here on. */
  idle: Watch
  /** What failed the stream right after the frames of its opening (thrown after them). */
  failure?: unknown
}

/** Feeds whole events through the tap; returns what to send on: nothing past an event that is not JSON, where the stream fails. */
function pass(tap: WireTap, events: string[]): string {
  let text = ''
  for (const ev of events) {
    const sent = tap.event(ev)
    if (sent !== null) text += sent
    // nothing after the stream's end ([DONE], message_stop, response.completed) is the reply's:
    // an SDK that reads on would take it in (the record, which stops there, would not)
    if (tap.state.unreadable || tap.state.done) break
  }
  return text
}

/**
 * Commit late, by the same rule as the translated path (ir/errors.ts firstEventFailure):
 * read up to the first whole event inside the upstream attempt; an error there is an
 * ordinary status (retried when retryable), never 200 plus an error frame. A stream's opening
 * snapshots (Responses' `response.created` and `.in_progress`, sent before the model has
 * begun) say nothing of whether it will serve: the event after them decides (OpenAI refuses a
 * prompt past the context window, and a spent quota, in band just after them).
 */
function commitFirstEvent(pt: Passthrough, tapOptions: TapOptions | undefined, onTapError: (e: unknown) => void, signal: AbortSignal) {
  return async (res: Response, idle: Watch): Promise<Committed> => {
    const reads = new EventReads(new GuardedTap(pt.tap(tapOptions), onTapError))
    const tap = reads.tap
    if (!res.body) throw firstEventFailure({ done: true })!
    await notAnEventStream(res)
    const reader = res.body.getReader()
    idle.streaming = true
    try {
      let firstFrames: string | Uint8Array = ''
      // the frames of the reads before the deciding one: the opening snapshots, held
      let held: string | undefined
      /** What ended the stream after its opening was held: thrown after it, in band. */
      let failure: unknown
      // (an upstream that pings on after its opening is not held past HELD_MAX: it commits)
      while (!reads.completed || (tap.state.opening === true && (held?.length ?? 0) + firstFrames.length < HELD_MAX)) {
        if (reads.completed) {
          // the stream has begun: from here its silence is watched, as once it is committed
          if (held === undefined) idle.begun()
          held = (held ?? '') + asText(firstFrames)
        }
        try {
          if (held !== undefined) idle.asking()
          const { done, value } = await reader.read()
          idle.touch()
          if (done) {
            const last = reads.end()
            if (last === undefined && held === undefined) throw firstEventFailure({ done: true })!
            firstFrames = last ?? ''
            break
          }
          firstFrames = reads.read(value)
        } catch (e) {
          // a stall, a cut or an event past its bound after the opening: the upstream took the
          // request (and may bill it), so the opening is relayed and the stream fails in band
          // after it, billed for its prompt. A client that left meanwhile has no stream to take
          // it: its 499 is recorded as before
          if (held === undefined || signal.aborted) throw e
          failure = e
          firstFrames = ''
          break
        }
      }
      if (held !== undefined) firstFrames = held + asText(firstFrames)
      if (!tap.state.produced) {
        const error = tap.state.error ?? tap.state.errorSaid
        if (error) throw firstEventFailure({ error })!
        if (tap.state.unreadable) throw firstEventFailure({ error: UNREADABLE })!
      }
      return { reads, reader, firstFrames, idle, failure }
    } catch (e) {
      idle.end()
      reader.cancel().catch(() => {})
      throw e
    }
  }
}

/** The characters of a stream's opening held at most while the event that decides is awaited. */
const HELD_MAX = 64 * 1024

const frameText = new TextDecoder()
/** Frames as text: a read relayed as it came is whole events, so whole characters. */
const asText = (f: string | Uint8Array): string => (typeof f === 'string' ? f : frameText.decode(f))

/** What is read of an upstream's body after its stream's end, at most, before it is cancelled. */
const DRAIN_BYTES = 64 * 1024
const DRAIN_MS = 1_000

/** The bodies being drained after their stream's end. */
const draining = new Set<Promise<void>>()

/**
 * The rest of a body whose stream has ended (its close, usually a moment after the last event),
 * read and dropped so that its connection goes back to the pool; cancelled (the socket closed)
 * past DRAIN_BYTES or DRAIN_MS. Cancelling at once made every streamed request a new connection
 * (and a TLS handshake) when the close came in a later segment than the last event.
 */
function drain(reader: ReadableStreamDefaultReader<Uint8Array>) {
  const d = drained(reader).finally(() => draining.delete(d))
  draining.add(d)
}

/** The bodies being drained (each DRAIN_MS at most), ended: a stop waits for them (a cassette is written at its body's end). */
export async function drainsEnded(): Promise<void> {
  await Promise.all(draining)
}

async function drained(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const timer = setTimeout(() => reader.cancel().catch(() => {}), DRAIN_MS)
  try {
    let n = 0
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      n += r.value.byteLength
      if (n > DRAIN_BYTES) {
        await reader.cancel()
        return
      }
    }
  } catch {
    // cancelled at the deadline, or the upstream went away: nothing to drain
  } finally {
    clearTimeout(timer)
  }
}

/** What a stream that sent an event whose data is not JSON fails with, as the translated path's does. */
const UNREADABLE = { status: 502, message: 'upstream sent a stream event that is not JSON', type: 'stream_error' }

/** The start of a JSON object whose first key is `error`: an error body, whatever the status said. */
const ERROR_FIRST = /^\s*\{\s*"error"\s*:/

/**
 * A 200 whose body is no reply (a proxy's HTML page, an error object sent without its status):
 * a failure before the first byte, retried and failed over as the translated path's is, with
 * what the body said; never handed to the client as a success, nor billed as one.
 */
function notAReply(res: Response, text: string): void {
  if (ERROR_FIRST.test(text)) throw notAReplyError(`an error with status ${res.status}: ${errorSaid(text) ?? 'an error'}`)
  const type = res.headers.get('content-type')?.toLowerCase() ?? ''
  if (type.startsWith('text/html') || !/^\s*\{/.test(text)) throw notAReplyError(`${type.split(';')[0] || 'a body'} that is not a JSON reply`)
  // a body cut short (a connection closed early, a Content-Length that lied) ends inside the object
  if (!endsAnObject(text)) throw notAReplyError('a JSON reply cut short')
}

/** Whether `text`'s last character but whitespace closes an object (read from the end: a reply is not parsed here). */
function endsAnObject(text: string): boolean {
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue
    return c === 0x7d
  }
  return false
}

/** At most this much of a body that is not an event stream is read, for its message. */
const NOT_SSE_READ = 16 * 1024

/**
 * A 200 that is a JSON or HTML page (a proxy's error, an upstream's body sent without its
 * status) where an event stream was asked for: a failure before the first event, as on the
 * translated path, with the message the body gives; never relayed as a stream's bytes.
 */
async function notAnEventStream(res: Response): Promise<void> {
  const type = res.headers.get('content-type')?.toLowerCase() ?? ''
  if (!type.startsWith('application/json') && !type.startsWith('text/html')) return
  const said = errorSaid(await bodyPrefix(res, NOT_SSE_READ))
  const message = `upstream answered a stream request with ${type.split(';')[0]}, not an event stream${said ? `: ${said}` : ''}`
  throw firstEventFailure({ error: { status: 502, message, type: 'not_an_event_stream' } })!
}

export async function relayStream(input: RelayInput & { sse: SseOptions }): Promise<Response> {
  const { pt, body, tapOptions, ctx, out, headers, sse } = input
  // a failure before the first event is thrown unrecorded, as in relayJson
  out.promptText = () => pt.promptText(body)
  const c = await pt.call(body, ctx, commitFirstEvent(pt, tapOptions, input.onTapError ?? ignore, ctx.signal))
  // a stream that fails from here on is billed for its prompt, as the upstream bills it
  out.accepted = true
  const { reads, reader, idle } = c
  const tap = reads.tap
  out.producedText = () => tap.producedText()
  if (tap.state.produced) out.firstToken()

  // The upstream's own error event is relayed as it came; the stream ends after it, as it does
  // after an event that is not JSON (which is not sent on)
  const failed = () => {
    const e = tap.state.error ?? (tap.state.unreadable ? UNREADABLE : null)
    return e ? new MidStreamError(e.message, e.status, e.type) : undefined
  }
  // the frames that end the stream wait until what the tap stored is durable
  const durable = tapOptions?.responses?.durable
  /** The stream's end was read: the rest of the upstream's body is drained aside, not cancelled. */
  let ended = false
  const frames = (async function* () {
    try {
      if (tap.state.done) await durable?.()
      yield c.firstFrames
      if (c.failure !== undefined) throw c.failure
      if ((ended = tap.state.done)) return
      for (let f = failed(); !f; f = failed()) {
        idle.asking()
        const { done, value } = await reader.read()
        idle.touch()
        if (done) {
          const last = reads.end()
          if (last !== undefined) {
            if (tap.state.done) await durable?.()
            yield last
          }
          // An upstream that closed without its terminator failed mid-stream: so must we, in band.
          // (A broken tap read nothing more: the upstream's own events, its end included, went on.)
          // (with the upstream's own word when it sent an error event first)
          const said = tap.state.errorSaid
          if (!tap.state.done && !tap.broken) throw (tap.state.error && failed()) || (said ? new MidStreamError(said.message, said.status, said.type) : new MidStreamError('upstream stream ended early', 502))
          return
        }
        const text = reads.read(value)
        if (tap.state.produced) out.firstToken()
        if (tap.state.done) {
          out.complete()
          await durable?.()
        }
        yield text
        // ended: what an upstream sends after its end is not relayed
        if ((ended = tap.state.done)) return
      }
      throw failed()
    } catch (e) {
      const err = midStreamFailure(e, ctx.signal, out)
      // a failure the upstream reported itself (insufficient quota) is billed as it reports it;
      // a stall or a cut, for the prompt it had
      if (tap.state.error ?? tap.state.errorSaid) out.accepted = false
      out.fail(err.status, err.message)
      throw err
    } finally {
      idle.end()
      noteTap(tap, out)
      if (ended) drain(reader)
      else reader.cancel().catch(() => {})
      out.record()
    }
  })()
  // An error event the upstream sent itself is already on the wire: no second frame.
  const errorFrame = sse.errorFrame
  return new Response(
    sseBody(frames, { ...sse, errorFrame: errorFrame && ((e) => (tap.state.error ? '' : errorFrame(e))) }),
    { status: 200, headers: { ...SSE_HEADERS, ...headers } },
  )
}
