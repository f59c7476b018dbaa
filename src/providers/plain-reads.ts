// A pass-through tap's read of an upstream read's bytes where they lie (routing/sse-bytes.ts):
// every event in it must be in the tap's one plain shape, or none is read and the read goes the
// text way. The text each event carries goes to the stream's produced text as the bytes it came
// in (decoded only when it holds escapes), and the read goes on as it came, less any member a
// tap cuts out.
import { copyBytes } from '../lib/bytes.ts'
import { found, plainEventAt, utf8 } from '../routing/sse-bytes.ts'
import { jsonStringAt } from '../routing/sse-fast.ts'
import type { ProducedText } from '../lib/produced-text.ts'

/** What a tap's check says of the event in `found`: not plain, plain as it is, or plain less the member at an index ≥ 0. */
export const NOT_PLAIN = -2
export const AS_IS = -1
export type PlainCheck = (b: Uint8Array) => number

// One read's events, found before any is taken: [start, end, text from, text to, cut, decoded
// text's index or -1] each. Shared by every read (a read is taken at once, on one thread).
const FIELDS = 6
const events: number[] = []
/** How many events the last readPlainEvents that returned bytes read. */
export const plainEventsRead = (): number => events.length / FIELDS
const decoded: string[] = []

/**
 * The read `b` (whole events, LF endings: sse-bytes.ts wholeLfEvents) with each event's text
 * taken into `produced`: the bytes to send on (`b` itself, or a copy less the members cut,
 * `cutLength` bytes each), or undefined when any event is not plain (nothing taken then).
 */
export function readPlainEvents(b: Uint8Array, produced: ProducedText, check: PlainCheck, cutLength = 0): Uint8Array | undefined {
  events.length = 0
  decoded.length = 0
  let cuts = 0
  for (let from = 0, end = 0; from < b.length; from = end) {
    if (!plainEventAt(b, from)) return undefined
    end = found.end
    // An event among others is checked on a view of its own: a search that finds nothing stops
    // at the event's end, not the read's (64 KiB of small events would cost a search of the
    // rest of the read each, quadratic in the read).
    const ev = from === 0 && end === b.length ? b : b.subarray(from, end)
    if (ev !== b) plainEventAt(ev, 0)
    const at = ev === b ? 0 : from
    const cut = check(ev)
    if (cut === NOT_PLAIN) return undefined
    let text = -1
    if (found.escaped) {
      // a text with escapes, decoded on its own; one that does not decode is the text way's
      const s = jsonStringAt(utf8(ev, found.textFrom - 1, found.textTo + 1), 1)?.value
      if (s === undefined) return undefined
      text = decoded.push(s) - 1
    }
    if (cut >= 0) cuts++
    events.push(from, end, at + found.textFrom, at + found.textTo, cut >= 0 ? at + cut : cut, text)
  }
  for (let i = 0; i < events.length; i += FIELDS) {
    const text = events[i + 5]!
    if (text >= 0) produced.push(decoded[text]!)
    else if (events[i + 3]! > events[i + 2]!) produced.pushBytes(b, events[i + 2]!, events[i + 3]!)
  }
  if (cuts === 0) return b
  const out = new Uint8Array(b.length - cuts * cutLength)
  let w = 0
  for (let i = 0; i < events.length; i += FIELDS) {
    const start = events[i]!
    const end = events[i + 1]!
    const cut = events[i + 4]!
    if (cut >= 0) {
      w += copyBytes(b, out, w, start, cut)
      w += copyBytes(b, out, w, cut + cutLength, end)
    } else w += copyBytes(b, out, w, start, end)
  }
  return out
}
