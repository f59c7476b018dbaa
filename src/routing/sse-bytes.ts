// Reads of a pass-through stream's bytes where they lie, for the one plain shape of a delta event
// (sse-fast.ts reads the same shape from text). A read of whole plain events goes on as it came:
// it is never decoded into a string, split into events, nor encoded again. Each helper answers
// false or -1 for anything else, and the read then goes the text way: a surprising event costs a
// decode, never a wrong record. What a helper found is left in one shared record (`found`): a
// read is scanned at once, on one thread, and nothing is kept of it per stream.

const LF = 10
const CR = 13
const QUOTE = 34
const BACKSLASH = 92

// Buffer's own methods, called on a read's Uint8Array as it is: their searches for a byte
// string are native, and no Buffer view is made of each read (nor its ArrayBuffer's object).
const INDEX_OF = Buffer.prototype.indexOf
const TO_STRING = Buffer.prototype.toString

/** Index of `what` (bytes) in b from `from`, or -1. */
export const indexOf = (b: Uint8Array, what: Buffer, from: number): number => INDEX_OF.call(b as Buffer, what, from)

/** b[from, to) decoded as UTF-8. */
export const utf8 = (b: Uint8Array, from: number, to: number): string => TO_STRING.call(b as Buffer, 'utf8', from, to)

/** A needle for the searches below. */
export const needle = (s: string): Buffer => Buffer.from(s, 'utf8')

/** Whether `b` ends at an event's end (a blank line, LF endings) and holds no CR at all. */
export function wholeLfEvents(b: Uint8Array): boolean {
  const n = b.length
  return n >= 2 && b[n - 1] === LF && b[n - 2] === LF && b.indexOf(CR) === -1
}

/** How many times `what` occurs in b[from, to). */
export function countIn(b: Uint8Array, what: Buffer, from: number, to: number): number {
  let n = 0
  for (let i = indexOf(b, what, from); i !== -1 && i + what.length <= to; i = indexOf(b, what, i + what.length)) n++
  return n
}

/** Index of `what` in b[from, to), or -1. */
export function indexIn(b: Uint8Array, what: Buffer, from: number, to: number): number {
  const i = indexOf(b, what, from)
  return i !== -1 && i + what.length <= to ? i : -1
}

/** Whether b[at, at + what.length) is `what`. */
export function bytesAt(b: Uint8Array, what: Buffer, at: number): boolean {
  if (at + what.length > b.length) return false
  for (let i = 0; i < what.length; i++) if (b[at + i] !== what[i]) return false
  return true
}

/** What the last helper found: an event's parts (plainEventAt), a string member's text (onlyStringIn). */
export const found = {
  /** past the event's blank line */
  end: 0,
  /** the `event:` line's name, b[nameFrom, nameTo); -1 for none */
  nameFrom: -1,
  nameTo: -1,
  /** the data, b[dataFrom, dataTo) */
  dataFrom: 0,
  dataTo: 0,
  /** a string member's text, b[textFrom, textTo) (equal for none); `escaped` when it must be decoded */
  textFrom: 0,
  textTo: 0,
  escaped: false,
}

const EVENT = needle('event: ')
const DATA = needle('data: ')

/**
 * Whether the event that begins at `from` is in the plain shape: an optional `event: ` line, one
 * `data: ` line and a blank line (`wholeLfEvents` has ruled out CR). Its parts go to `found`.
 */
export function plainEventAt(b: Uint8Array, from: number): boolean {
  let at = from
  found.nameFrom = found.nameTo = -1
  found.textFrom = found.textTo = 0
  found.escaped = false
  if (bytesAt(b, EVENT, at)) {
    const nl = b.indexOf(LF, at)
    if (nl === -1) return false
    found.nameFrom = at + EVENT.length
    found.nameTo = nl
    at = nl + 1
  }
  if (!bytesAt(b, DATA, at)) return false
  const nl = b.indexOf(LF, at)
  if (nl === -1 || b[nl + 1] !== LF) return false
  found.dataFrom = at + DATA.length
  found.dataTo = nl
  found.end = nl + 2
  return true
}

/**
 * Index of the quote that closes the JSON string opened just before `from`, in b[from, to); -1
 * when it does not close there.
 */
export function stringEnd(b: Uint8Array, from: number, to: number): number {
  for (let q = b.indexOf(QUOTE, from); q !== -1 && q < to; q = b.indexOf(QUOTE, q + 1)) {
    let slashes = 0
    while (q - 1 - slashes >= from && b[q - 1 - slashes] === BACKSLASH) slashes++
    if (slashes % 2 === 0) return q
  }
  return -1
}

const NULL = needle('null')

/**
 * sse-fast.ts onlyString over b[from, to), for the member `name` (its key quoted, and the
 * colon): its text goes to `found` (none for no such member, or null); false when the member is
 * there in another form (twice, a number, an object) or its string does not close.
 */
export function onlyStringIn(b: Uint8Array, name: Buffer, from: number, to: number): boolean {
  found.textFrom = found.textTo = 0
  found.escaped = false
  const n = countIn(b, name, from, to)
  if (n === 0) return true
  if (n > 1) return false
  return stringOrNullAt(b, indexIn(b, name, from, to) + name.length, to)
}

/**
 * The value that begins at `i` (a member's, past its colon), in b[i, to): null, or a string whose
 * text goes to `found`; false for any other value, or a string that does not close there.
 */
export function stringOrNullAt(b: Uint8Array, i: number, to: number): boolean {
  found.textFrom = found.textTo = 0
  found.escaped = false
  if (bytesAt(b, NULL, i)) return true
  if (b[i] !== QUOTE) return false
  const end = stringEnd(b, i + 1, to)
  if (end === -1) return false
  const slash = b.indexOf(BACKSLASH, i + 1)
  found.textFrom = i + 1
  found.textTo = end
  found.escaped = slash !== -1 && slash < end
  return true
}

/** Whether b[at, at + what.length) is `what` and ends by `to`. */
export function bytesWithin(b: Uint8Array, what: Buffer, at: number, to: number): boolean {
  return at + what.length <= to && bytesAt(b, what, at)
}

/** sse-fast.ts closesAfter over b[from, to). */
export function closesAfter(b: Uint8Array, from: number, to: number): number {
  let net = 0
  let inString = false
  for (let i = from; i < to; i++) {
    const c = b[i]!
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === 125 || c === 93) net++
    else if (c === 123 || c === 91) net--
  }
  return inString ? -1 : net
}
