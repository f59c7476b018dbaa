// Per-key sums of dollars: what this instance charged but has not stored yet, or what a batch
// worker stored and the main thread has not heard of. A sum back at zero is removed, and within
// a trillionth of a dollar counts as zero: adding and taking back the same costs leaves float
// noise, never a real amount.

export class SpendByKey {
  private readonly sums = new Map<string, number>()

  get(keyId: string): number {
    return this.sums.get(keyId) ?? 0
  }

  add(keyId: string, usd: number): void {
    if (usd === 0 || !Number.isFinite(usd)) return
    const v = this.get(keyId) + usd
    if (Math.abs(v) < 1e-12) this.sums.delete(keyId)
    else this.sums.set(keyId, v)
  }

  /** Everything, emptied. */
  drain(): [keyId: string, usd: number][] {
    const out = [...this.sums]
    this.sums.clear()
    return out
  }
}

/** The positive costs of records, summed per key. */
export function costsByKey(rows: Iterable<{ apiKeyId: string; cost: number | null }>): Map<string, number> {
  const m = new Map<string, number>()
  for (const r of rows) if (r.cost !== null && r.cost > 0) m.set(r.apiKeyId, (m.get(r.apiKeyId) ?? 0) + r.cost)
  return m
}
