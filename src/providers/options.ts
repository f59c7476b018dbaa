// What an adapter is given beside its provider's config.
import type { Logger } from '../http/log.ts'
import type { PoolPosition } from '../routing/pool-position.ts'
import type { Transport } from './http.ts'

/** Where its key pool's round stands, where it logs, and what sends its requests upstream. */
export interface AdapterOptions {
  position?: PoolPosition
  log?: Pick<Logger, 'warn'>
  /** Fetch, unless cassettes or the response cache stand in (src/replay). */
  transport?: Transport
}
