// An item worker's side of a batch item's hold: the scheduler on the main thread holds the item
// (the key's ledger is there), so when an item reaches a fallback model the worker asks it to hold
// that model's price, and waits for its answer before the call (item-hold.ts answers).
import type { AdmitAsk } from '../billing/admission.ts'
import type { FromWorker } from './types.ts'

export class HoldAsks {
  private next = 1
  private readonly waiting = new Map<number, (ok: boolean) => void>()

  constructor(private readonly post: (m: FromWorker) => void) {}

  /** Held for the item of job `id`; rejects when the key's credit (or the shared store) cannot hold it. */
  ask(id: number, ask: AdmitAsk): Promise<undefined> {
    const n = this.next++
    return new Promise((resolve, reject) => {
      this.waiting.set(n, (ok) => (ok ? resolve(undefined) : reject(new Error('the fallback model could not be held against the key'))))
      this.post({ type: 'hold', id, n, ask })
    })
  }

  /** The main thread's answer to ask `n`. */
  answered(n: number, ok: boolean): void {
    const done = this.waiting.get(n)
    this.waiting.delete(n)
    done?.(ok)
  }
}
