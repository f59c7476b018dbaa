// The bytes of request bodies the gateway holds while it reads and parses them, all requests
// together (config `limits.body_budget_bytes`). Each body is bounded on its own
// (`limits.max_body_bytes`), but a client that opens a hundred connections and sends a body just
// under that bound on each would have the gateway read and parse them all at once: the bytes, their
// text and the parsed values of each, gigabytes in all. So a body takes its share of the budget
// before it is read: its declared length up front, then whatever it decompresses (or, chunked,
// sends) past that as it arrives. It gives the share back once it is parsed, or its read failed.
// A large body that does not fit is refused with a 503 before its first byte is read (Bun reads
// no body nobody asks for), and its client may send it again a moment later; a small one is
// always read, counted but never refused, so ordinary traffic flows while large bodies wait
// their turn. Uploads that stream to storage (multipart) hold no body in memory and take no share.
import { HttpError } from './errors.ts'

/** A body no larger than this is never refused by the budget: nearly every request is one. */
export const ALWAYS_READ_BYTES = 1024 * 1024

/** One per process, as memory is: set as the gateway starts. */
const budget = { max: 256 * ALWAYS_READ_BYTES, held: 0, refused: 0 }

/**
 * What each key's bodies hold. A body takes its declared length before its bytes come, so one
 * key's connections that declare large bodies and send them slowly (as slowly as the pace rule
 * lets them) would hold the budget for everyone: one key's large bodies hold half of it at most.
 */
const byKey = new Map<string, number>()

export function setBodyBudget(bytes: number) {
  budget.max = bytes
}

/** Bytes of bodies being read or parsed now. */
export function bodyBytesHeld(): number {
  return budget.held
}

/** Large bodies refused so far for want of room. */
export function bodyBudgetRefusals(): number {
  return budget.refused
}

function busy(): HttpError {
  // the body is left unread: the connection closes, as Bun would otherwise read it to its end
  return new HttpError(503, 'The gateway is reading as many large request bodies as it has room for; send this one again in a moment (limits.body_budget_bytes)', {
    'retry-after': '1',
    connection: 'close',
  })
}

/** One body's share of the budget, of the key that sends it (none: a request without one); `release` gives it all back (once; later calls do nothing). */
export class BodyShare {
  private held = 0

  constructor(private readonly key?: string) {}

  /** The body is `size` bytes long so far (or declares so): what it holds grows to that, or it is refused (503) when large and the budget (or its key's half) has no room. */
  reached(size: number): void {
    const more = size - this.held
    if (more <= 0) return
    const key = this.key
    const keyHeld = key === undefined ? 0 : (byKey.get(key) ?? 0)
    if (size > ALWAYS_READ_BYTES && (budget.held + more > budget.max || (key !== undefined && keyHeld + more > budget.max / 2))) {
      budget.refused++
      throw busy()
    }
    budget.held += more
    if (key !== undefined) byKey.set(key, keyHeld + more)
    this.held = size
  }

  release(): void {
    if (this.held === 0) return
    budget.held -= this.held
    const key = this.key
    if (key !== undefined) {
      const left = (byKey.get(key) ?? 0) - this.held
      if (left > 0) byKey.set(key, left)
      else byKey.delete(key)
    }
    this.held = 0
  }
}
