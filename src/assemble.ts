// The services of one thread, put together the same way on the request thread (server.ts)
// and in a batch worker (batches/worker-services.ts). What differs is given: where credit
// reservations are held, whether billing keeps a journal for another thread, the
// recorder's bounds, the rate limiter, and what is shared with other instances. Background
// work (pruning, key watching, batches) is started by the caller.
import { KeyStore } from './auth/keys.ts'
import type { RateLimiter } from './auth/ratelimit.ts'
import { Billing } from './billing/billing.ts'
import type { Ledger } from './billing/ledger.ts'
import type { Cluster } from './cluster/create.ts'
import { buildCatalog } from './config/catalog.ts'
import type { Config } from './config/load.ts'
import type { Storage } from './db/client.ts'
import { createFilesService } from './files/create.ts'
import { Recorder, type RecorderOptions } from './generations/recorder.ts'
import type { Logger } from './http/log.ts'
import { createMediaResolver, fetchPolicy } from './media/resolve.ts'
import { createProviders } from './providers/registry.ts'
import { deploymentKey, MemoryHealth, type DeploymentHealth } from './routing/health.ts'
import { RedisHealth } from './routing/redis-health.ts'
import { MemoryPoolPosition } from './routing/pool-position.ts'
import { RedisPoolPosition } from './routing/redis-pool-position.ts'
import type { Services } from './services.ts'
import { startTracing } from './tracing/start.ts'
import { GatewayMetrics } from './metrics/gateway.ts'
import { observers } from './pipeline/observe.ts'
import { createCacheStore } from './cache/create.ts'
import { withCache } from './cache/transport.ts'
import { cassetteTransport } from './replay/replay.ts'
import { storeHealth } from './db/unavailable.ts'
import { ContainerGrants } from './containers/grants.ts'

export interface AssembleOptions {
  ledger: Ledger
  limiter: RateLimiter
  /** A batch worker's billing keeps what it stored, for the request thread. */
  journal?: boolean
  recorder?: RecorderOptions
  cluster?: Cluster
  /** The request thread counts for GET /metrics; a batch worker does not (the scheduler counts its items). */
  metrics?: boolean
}

export function assembleServices(config: Config, storage: Storage, log: Logger, opts: AssembleOptions): Services {
  const catalog = buildCatalog(config)
  const keys = new KeyStore(storage)
  const billing = new Billing(
    { keys, catalog, sql: storage.sql, onSharedDown: config.redis?.onError, degraded: () => opts.cluster?.redis?.degraded() },
    opts.ledger,
    { journal: opts.journal },
  )
  const files = createFilesService({ config, storage, log })
  // deployments' rests and key pools' rounds are shared by the instances of a cluster, so they stop sending together
  const redis = opts.cluster?.redis
  // those the config and the built-in table name, that is: one a client's model id makes stays each instance's
  const named = new Set(catalog.list().flatMap((m) => m.deployments.map(deploymentKey)))
  const health: DeploymentHealth = redis ? new RedisHealth(redis, config.routing, log, { bus: opts.cluster?.bus, shares: (key) => named.has(key) }) : new MemoryHealth(config.routing)
  const onClose: Services['onClose'] = [() => health.close()]
  // each thread (a batch worker too) exports its own spans
  const tracing = startTracing(config.tracing, { catalog, providers: config.providers, log })
  if (tracing) onClose.push(() => tracing.close())
  const metrics = opts.metrics ? new GatewayMetrics({ config, catalog, health, sql: storage.sql, warn: (msg, fields) => log.warn(msg, fields), takenAhead: opts.cluster?.takenAhead }) : undefined
  if (metrics) onClose.push(() => metrics.close())
  // the response cache answers in front of whatever sends upstream (fetch, cassettes)
  const cache = createCacheStore(config, storage, log, opts.cluster)
  const upstream = config.replay ? cassetteTransport(config.replay, config, log) : fetch
  // the grants a reply gave are written a turn later: the last ones before a stop too
  const containers = new ContainerGrants(storage.sql)
  onClose.push(() => containers.flush())
  const storeHealth_ = storeHealth(storage, (why) => log.error('the database is down: nothing that writes is taken until it is back', { why }))
  return {
    config,
    storage,
    storeHealth: storeHealth_,
    storeLost: storage.dialect === 'sqlite' ? () => storeHealth_().database === 'down' : undefined,
    catalog,
    keys,
    billing,
    limiter: opts.limiter,
    log,
    providers: createProviders(config, { log, position: redis ? new RedisPoolPosition(redis) : new MemoryPoolPosition(), transport: withCache(cache, log, upstream) }),
    cache,
    containers,
    health,
    observe: observers([...(metrics ? [metrics.observer] : []), ...(tracing ? [tracing.observer] : [])]),
    metrics,
    recorder: new Recorder({ config, storage, catalog, billing, log }, opts.recorder),
    files,
    media: createMediaResolver({ files, policy: fetchPolicy(config) }),
    cluster: opts.cluster,
    tracing,
    onClose,
  }
}
