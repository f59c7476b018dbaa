// Whether a call's argument text streamed so far is one whole JSON object (or array), which no
// more text can continue: read piece by piece, a character at a time, keeping only its depth and
// whether it is inside a string (never the text itself, which may be large).

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPENERS = new Set([0x7b, 0x5b])
const CLOSERS = new Set([0x7d, 0x5d])
const SPACES = new Set([0x20, 0x09, 0x0a, 0x0d])

export class WholeJson {
  private depth = 0
  private inString = false
  private escaped = false
  /** The last thing read at the top level closed a container. */
  private closed = false

  get whole(): boolean {
    return this.closed
  }

  feed(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === BACKSLASH) this.escaped = true
        else if (c === QUOTE) this.inString = false
        continue
      }
      if (SPACES.has(c)) continue
      // anything else at the top level begins something new (or is no JSON): not whole
      if (this.depth === 0) this.closed = false
      if (c === QUOTE) this.inString = true
      else if (OPENERS.has(c)) this.depth++
      else if (CLOSERS.has(c) && this.depth > 0 && --this.depth === 0) this.closed = true
    }
  }
}
