// The parsed input items of large stored responses, kept a while for their listing
// (`GET /responses/{id}/input_items`): a client pages through a response of tens of thousands of
// items 20 or 100 at a time, and reading and parsing its whole stored input again at every page
// held the event loop 60–80 ms a page (20 pages at once, over a second). A stored row never
// changes, so its items are kept by row id; whoever lists them has found the row first (a
// deleted or pruned one is never found, and so never listed). Pages asked for at once while the
// row is read wait for that one read.
import type { Item } from './items.ts'

/** Inputs stored with fewer characters than this are read again each time (cheap), not kept. */
export const KEPT_FROM_CHARS = 64 * 1024
/** The stored characters of the inputs kept, all together (their parsed items take about twice that). */
const MAX_KEPT_CHARS = 16 * 1024 * 1024
/** An input kept this long unused is let go. */
const KEPT_MS = 60_000

interface Kept {
  items: Item[]
  chars: number
  /** The key's id and the response id it was stored under: a delete lets it go. */
  owner: string
  used: number
}

export class InputCache {
  /** In the order of their last use, oldest first. */
  private readonly kept = new Map<string, Kept>()
  private readonly reading = new Map<string, Promise<Item[] | undefined>>()
  private chars = 0
  /** A sweep to come, so what is kept goes when listings stop too (never keeps the process alive). */
  private sweeping: ReturnType<typeof setTimeout> | undefined

  /** The items of row `rowId`, kept or read by `read` (its stored text's length and the items; undefined when the row is gone). */
  async get(rowId: string, owner: string, read: () => Promise<{ chars: number; items: Item[] } | undefined>): Promise<Item[] | undefined> {
    this.sweep()
    const hit = this.kept.get(rowId)
    if (hit) {
      this.kept.delete(rowId)
      hit.used = performance.now()
      this.kept.set(rowId, hit)
      return hit.items
    }
    let pending = this.reading.get(rowId)
    if (!pending) {
      pending = read().then((got) => {
        if (got && got.chars >= KEPT_FROM_CHARS && got.chars <= MAX_KEPT_CHARS) this.keep(rowId, { ...got, owner, used: performance.now() })
        return got?.items
      })
      this.reading.set(rowId, pending)
      const done = () => void this.reading.delete(rowId)
      pending.then(done, done)
    }
    return pending
  }

  /** Lets go of what was kept of the responses stored under `owner` (a delete). */
  forget(owner: string): void {
    for (const [rowId, k] of this.kept) if (k.owner === owner) this.drop(rowId, k)
  }

  private keep(rowId: string, k: Kept) {
    this.kept.set(rowId, k)
    this.chars += k.chars
    this.sweepLater()
    for (const [oldest, o] of this.kept) {
      if (this.chars <= MAX_KEPT_CHARS) break
      this.drop(oldest, o)
    }
  }

  private sweep() {
    const old = performance.now() - KEPT_MS
    for (const [rowId, k] of this.kept) {
      if (k.used >= old) break
      this.drop(rowId, k)
    }
  }

  private sweepLater() {
    if (this.sweeping !== undefined) return
    this.sweeping = setTimeout(() => {
      this.sweeping = undefined
      this.sweep()
      if (this.kept.size > 0) this.sweepLater()
    }, KEPT_MS)
    this.sweeping.unref()
  }

  private drop(rowId: string, k: Kept) {
    this.kept.delete(rowId)
    this.chars -= k.chars
  }
}
