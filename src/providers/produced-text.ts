// The text a relayed stream has produced so far, read only if the stream ends early (to bill
// it by a count). A long stream brings hundreds of small pieces; kept as they came, each is a
// string of its own for the stream's whole life, and one cut out of its event (a substring) keeps
// the whole event alive with it. They are joined as they gather instead, into a string of their own.

const JOIN_EVERY = 8

export class ProducedText {
  private joined = ''
  private pieces: string[] = []
  /** Pieces pushed so far. */
  length = 0

  push(piece: string): void {
    this.pieces.push(piece)
    this.length++
    if (this.pieces.length >= JOIN_EVERY) {
      this.joined += this.pieces.join('')
      this.pieces.length = 0
    }
  }

  text(): string {
    return this.joined + this.pieces.join('')
  }
}
