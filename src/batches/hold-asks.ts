// An item worker's side of a batch item's hold: the scheduler on the main thread holds the item
// (the key's ledger is there), so when an item reaches a fallback model the worker asks it to hold
// that model's price, and waits for its answer before the call (item-hold.ts answers). An answer
// that does not come in time is a refusal: the item ends with the failure before the fallback,
// rather than wait for ever in its slot (a late hold is given back with the item's).

import type { AdmitAsk } from '../billing/admission.ts'
import type { FromWorker } from './types.ts'

/** How long a worker waits for the main thread's answer. */
export const ANSWER_MS = 60_000

export class HoldAsks {
  private next = 1
  private readonly waiting = new Map<number, (ok: boolean) => void>()

  constructor(
    private readonly post: (m: FromWorker) => void,
    private readonly answerMs = ANSWER_MS,
  ) {}

  /** Held for the item of job `id`; rejects when the key's credit (or the shared store) cannot hold it, or no answer came in time. */
  ask(id: number, ask: AdmitAsk): Promise<undefined> {
    const n = this.next++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.answered(n, false), this.answerMs)
      timer.unref?.()
      this.waiting.set(n, (ok) => {
        clearTimeout(timer)
        if (ok) resolve(undefined)
        else reject(new Error('the fallback model could not be held against the key'))
      })
      this.post({ type: 'hold', id, n, ask })
    })
  }

  /** The main thread's answer to ask `n` (one that came after its time is let go). */
  answered(n: number, ok: boolean): void {
    const done = this.waiting.get(n)
    this.waiting.delete(n)
    done?.(ok)
  }
}
