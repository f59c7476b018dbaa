// The text a relayed stream has produced so far, read only if the stream ends early (to bill
// it by a count). A long stream brings hundreds of small pieces; kept as they came, each is a
// string of its own for the stream's whole life. They are joined as they gather instead.

const JOIN_EVERY = 32

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
