// A provider's API keys, used round-robin per upstream call. Where the round stands is a
// PoolPosition (memory on one instance, Redis across a cluster). A key the upstream answers
// with 401 or 403 leaves the pool until the gateway restarts, logged once with its tail masked,
// while another key remains: the last one stays, and its refusals reach the client as a 502
// naming the provider (as with a single key), so a pool is never left with nothing to send; the
// operator is told of them in the log, once a minute.
import { maskKey } from '../config/providers.ts'
import type { Logger } from '../http/log.ts'
import { MemoryPoolPosition, type PoolPosition } from '../routing/pool-position.ts'
import { rememberSecrets } from '../lib/secrets.ts'

/** A provider whose last key is refused is said to be so at most this often. */
const REFUSAL_LOG_EVERY_MS = 60_000

export class KeyPool {
  private readonly live: string[]
  /** The provider was configured with keys (a pool of none sends no credentials). */
  readonly configured: boolean

  private lastRefusalLogged = -Infinity

  constructor(
    private readonly providerId: string,
    keys: readonly string[],
    private readonly position: PoolPosition = new MemoryPoolPosition(),
    private readonly log?: Pick<Logger, 'warn'>,
  ) {
    this.live = [...new Set(keys)]
    this.configured = this.live.length > 0
    rememberSecrets(this.live)
  }

  /** Keys still in the pool. */
  get size(): number {
    return this.live.length
  }

  /** The key for the next call; undefined when the provider has none. */
  take(): string | undefined {
    if (!this.configured) return undefined
    return this.live[this.position.next(this.providerId, this.live.length) % this.live.length]
  }

  /**
   * The upstream answered `status` (401/403) to `key`: it leaves the pool unless it is the last.
   * True when the call may go on with another key (this one left, or another call took it out already).
   */
  reject(key: string, status: number): boolean {
    const i = this.live.indexOf(key)
    if (i < 0) return this.live.length > 0
    if (this.live.length === 1) {
      // the operator's to fix, and every call fails until then: said, once a minute
      const now = Date.now()
      if (now - this.lastRefusalLogged >= REFUSAL_LOG_EVERY_MS) {
        this.lastRefusalLogged = now
        this.log?.warn('upstream refused the only API key left: its calls fail until the key is fixed', { provider: this.providerId, key: maskKey(key), status })
      }
      return false
    }
    this.live.splice(i, 1)
    this.log?.warn('upstream refused an API key: it leaves the pool until restart', { provider: this.providerId, key: maskKey(key), status, keys_left: this.live.length })
    return true
  }
}
