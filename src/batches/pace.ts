// The pace of batch work: a token bucket of items started per second, across every batch
// (config `batches.max_items_per_second`; large batches may be throttled). Against a real
// upstream the concurrency cap binds long before it; against the instant mock provider it
// keeps the main thread's share of batch work (admission, results, records) small enough
// that interactive requests do not queue behind it. Pure but for the clock it is given.

export class Pace {
  private tokens: number
  private last: number
  private readonly burst: number

  /** `rate` items a second (0: unlimited), with up to a tenth of a second's worth at once. */
  constructor(private readonly rate: number, private readonly now: () => number = () => performance.now()) {
    this.burst = Math.max(1, Math.ceil(rate / 10))
    this.tokens = this.burst
    this.last = now()
  }

  get unlimited(): boolean {
    return this.rate <= 0
  }

  private refill(): void {
    const t = this.now()
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.rate) / 1000)
    this.last = t
  }

  /** Starts that could be granted now (without taking them); unlimited: Infinity. */
  available(): number {
    if (this.unlimited) return Infinity
    this.refill()
    return Math.max(0, Math.floor(this.tokens))
  }

  /** Takes up to `want` starts; returns how many were granted. */
  take(want: number): number {
    if (this.unlimited) return want
    this.refill()
    const n = Math.max(0, Math.min(want, Math.floor(this.tokens)))
    this.tokens -= n
    return n
  }

  /** Milliseconds until one more start is granted. */
  waitMs(): number {
    if (this.unlimited) return 0
    return Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.rate))
  }
}
