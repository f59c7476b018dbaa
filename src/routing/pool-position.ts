// Where a provider's key pool is in its round: the pool asks for the next position and takes
// that key (position modulo its size). In memory on one instance; redis-pool-position.ts shares
// the round between the instances of a cluster.

export interface PoolPosition {
  /** A position in [0, size): successive calls go round the pool. */
  next(providerId: string, size: number): number
}

export class MemoryPoolPosition implements PoolPosition {
  private counters = new Map<string, number>()

  next(providerId: string, size: number): number {
    if (size <= 1) return 0
    const n = this.counters.get(providerId) ?? 0
    this.counters.set(providerId, n + 1)
    return n % size
  }
}
