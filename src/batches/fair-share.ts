// How many items each open batch may have in flight, when batches of several keys (or several
// batches of one key) run at once: the instance's places are split evenly between the keys
// with work, and a key's part evenly between its batches. A share one does not use (its own
// concurrency is lower) goes to the others, so a batch alone still runs at its own
// concurrency. Every batch with work gets at least one place, whatever the total.

/** Max-min fair split of `total` places among `demands`: nobody gets more than it asks. */
export function fairSplit(total: number, demands: readonly number[]): number[] {
  const order = demands.map((_, i) => i).sort((a, b) => demands[a]! - demands[b]!)
  const out = new Array<number>(demands.length).fill(0)
  let left = total
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!
    const even = Math.floor(left / (order.length - k))
    out[i] = Math.max(1, Math.min(demands[i]!, even))
    left = Math.max(0, left - out[i]!)
  }
  return out
}

export interface Wanting {
  id: string
  keyId: string
  /** The batch's own concurrency. */
  cap: number
}

/** Each batch's places, by batch id: the total split over keys, then each key's part over its batches. */
export function batchShares(total: number, batches: Iterable<Wanting>): Map<string, number> {
  const byKey = new Map<string, Wanting[]>()
  for (const b of batches) {
    const of = byKey.get(b.keyId)
    if (of) of.push(b)
    else byKey.set(b.keyId, [b])
  }
  const keys = [...byKey.values()]
  const parts = fairSplit(
    total,
    keys.map((bs) => bs.reduce((n, b) => n + b.cap, 0)),
  )
  const shares = new Map<string, number>()
  keys.forEach((bs, k) => {
    const split = fairSplit(parts[k]!, bs.map((b) => b.cap))
    bs.forEach((b, i) => shares.set(b.id, split[i]!))
  })
  return shares
}

/**
 * Starts handed out one at a time, key by key and within a key batch by batch, beginning at
 * `turn` (the caller counts its rounds up, so no key or batch is always first): for the pace,
 * a few starts a tick, which a split by shares would round away from the same ones each time.
 */
export function roundRobin(starts: number, batches: readonly (Wanting & { room: number })[], turn: number): Map<string, number> {
  const byKey = new Map<string, (Wanting & { room: number })[]>()
  for (const b of batches) {
    if (b.room <= 0) continue
    const of = byKey.get(b.keyId)
    if (of) of.push(b)
    else byKey.set(b.keyId, [b])
  }
  const budgets = new Map<string, number>()
  const keys = [...byKey.values()]
  let left = starts
  for (let round = 0; left > 0 && keys.length > 0; round++) {
    let given = 0
    for (let k = 0; k < keys.length && left > 0; k++) {
      const bs = keys[(k + turn) % keys.length]!
      // this key's batches in turn, from a place that moves with the rounds
      for (let j = 0; j < bs.length; j++) {
        const b = bs[(j + Math.floor(turn / keys.length) + round) % bs.length]!
        const had = budgets.get(b.id) ?? 0
        if (had >= b.room) continue
        budgets.set(b.id, had + 1)
        left--
        given++
        break
      }
    }
    if (given === 0) break
  }
  return budgets
}
