// The text a relayed stream has produced so far, read only if the stream ends early (to bill it by
// a count) or for an exported trace; and the text of a Responses output item as it streams, for
// its done events. A long stream brings hundreds of small pieces; kept as
// strings, each is an object of its own for the stream's whole life (and one cut out of its event,
// a JSC substring, keeps the whole event alive with it). They are kept as UTF-8 in one buffer
// instead, grown by doubling, and a pass-through read of plain events adds the bytes it came in
// without ever making them a string (routing/sse-bytes.ts).

import { copyBytes, writeUtf8 } from './bytes.ts'

const dec = new TextDecoder()
const FIRST = 256

export class ProducedText {
  /** The first piece, kept as it came: a JSON reply's text is often the only one, and needs no buffer. */
  private first = ''
  private buf: Uint8Array | undefined
  private size = 0
  /** Pieces pushed so far. */
  length = 0

  /** The buffer, with room for n more bytes (made on the second piece, the first piece in it). */
  private room(n: number): Uint8Array {
    let buf = this.buf
    if (buf && this.size + n <= buf.length) return buf
    if (!buf && this.first !== '') {
      const first = this.first
      this.first = ''
      this.encode(first)
      buf = this.buf!
      if (this.size + n <= buf.length) return buf
    }
    const grown = new Uint8Array(Math.max(FIRST, (buf?.length ?? 0) * 2, this.size + n))
    if (buf) grown.set(buf.subarray(0, this.size))
    return (this.buf = grown)
  }

  private encode(piece: string): void {
    // a UTF-16 unit is at most 3 bytes of UTF-8
    const buf = this.room(piece.length * 3)
    this.size += writeUtf8(buf, piece, this.size)
  }

  /**
   * A piece that ends with the first half of a surrogate pair keeps it back until the next
   * piece: a character split across two deltas (a model's emoji, say) is one character, where
   * each half encoded alone would be a replacement character.
   */
  private high = ''

  push(piece: string): void {
    if (this.high !== '') {
      piece = this.high + piece
      this.high = ''
    }
    const last = piece.charCodeAt(piece.length - 1)
    if (last >= 0xd800 && last <= 0xdbff) {
      this.high = piece.slice(-1)
      piece = piece.slice(0, -1)
    }
    if (this.length++ === 0) this.first = piece
    else this.encode(piece)
  }

  /** A piece that is the UTF-8 of b[from, to). */
  pushBytes(b: Uint8Array, from: number, to: number): void {
    // a half kept back that no text completed: it goes before these bytes, as what it is
    if (this.high !== '') {
      const high = this.high
      this.high = ''
      this.encode(high)
    }
    // room first: it may move the first piece into the buffer, and so the size
    const buf = this.room(to - from)
    this.size += copyBytes(b, buf, this.size, from, to)
    this.length++
  }

  text(): string {
    return (this.buf ? dec.decode(this.buf.subarray(0, this.size)) : this.first) + this.high
  }
}
