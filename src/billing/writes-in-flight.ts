// Writes of charged costs under way, as a reader of a key's row must know them. A key's `spent`
// in the cache is its row's figure plus what this process charged and has not stored; on
// PostgreSQL the row is read on one connection while a write commits on another, and the two
// answers come back in either order. A row read while a write was between its start and its end
// may show a cost stored while it still counts as not stored (twice), or not yet stored while
// it no longer counts as unstored (never). So such a read is made again once the writes end.

/** The writes' state at a moment: unchanged across a read means no write straddled it. */
export type WritesMark = number

/** How long a reader waits for the writes under way to end before reading again anyway. */
const SETTLE_WAIT_MS = 100

export class WritesInFlight {
  private open = 0
  private ended = 0
  private waiting: (() => void)[] = []

  /** A write begins (call as its rows are taken); returns its end, to call once. */
  begin(): () => void {
    this.open++
    let done = false
    return () => {
      if (done) return
      done = true
      this.open--
      this.ended++
      if (this.open === 0) for (const go of this.waiting.splice(0)) go()
    }
  }

  /** Now, as a read must compare it after: -1 while any write is open (no read is clean then). */
  mark(): WritesMark {
    return this.open > 0 ? -1 : this.ended
  }

  /** Whether nothing began or ended since `before` (taken with `mark`). */
  clean(before: WritesMark): boolean {
    return before !== -1 && this.mark() === before
  }

  /** Resolves when no write is open, or after a short wait (writes that follow each other closely never leave none open). */
  settled(): Promise<void> {
    if (this.open === 0) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SETTLE_WAIT_MS)
      this.waiting.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}
