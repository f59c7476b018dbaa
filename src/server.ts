// Start-up and shutdown: config → services → app → Bun.serve, and back down again.
import { SQL } from 'bun'
import { join } from 'node:path'
import { preloadTokenizer, setTokenWorkers } from './tokens/count.ts'
import { createApp, directTable, generationHandlers } from './app.ts'
import { directRoutes } from './http/direct.ts'
import { setBodyPace } from './http/body-deadline.ts'
import { setBodyBudget } from './http/body-budget.ts'
import { KNOWN_FAILURES } from './failures.ts'
import { replayResultSpools } from './batches/results-replay.ts'
import { BatchService } from './batches/service.ts'
import { Retention } from './retention.ts'
import { threadStoreOf } from './surfaces/responses/surface.ts'
import { assembleServices } from './assemble.ts'
import { MemoryLedger } from './billing/ledger.ts'
import { PgLedger } from './billing/pg-ledger.ts'
import { MemoryStore, RateLimiter, steadyNow } from './auth/ratelimit.ts'
import type { Config } from './config/load.ts'
import { startCheckpointer } from './db/checkpointer.ts'
import { openStorage } from './db/client.ts'
import { checkCluster, storageOptions } from './db/options.ts'
import { createLogger, type Logger } from './http/log.ts'
import { createPipeline } from './front.ts'
import { lockDataDir, sharesDataDir, type DataDirLock } from './db/data-dir-lock.ts'
import { ConfigError } from './config/errors.ts'
import type { Services } from './services.ts'
import { stopCut } from './pipeline/generate.ts'
import { drainsEnded } from './pipeline/relay.ts'
import { busOnPostgres, createCluster, type Cluster } from './cluster/create.ts'
import { failStartIfAsked } from './test-start-failure.ts'
import { loadPriceLibrary } from './config/price-library.ts'
import { boundHeap } from './lib/heap-bound.ts'


/** Every service, and the batches built on them: what start-up holds (and tests reach into). */
export type ServerServices = Services & { batches: BatchService; retention: Retention }

/** The request thread's garbage allowed past what its last collection left (a batch worker's: 8 MiB). */
const REQUEST_HEAP_SLACK_BYTES = 16 * 1024 * 1024

/** At the end of a stop's grace, how long the streams still open have to send their error frames. */
const CUT_FRAMES_MS = 250

export async function buildServices(config: Config, log: Logger = createLogger(config.logLevel, undefined, config.logFormat), cluster?: Cluster): Promise<ServerServices> {
  checkCluster(config)
  // the request thread prices requests of most models: the library loads now, not in a request
  loadPriceLibrary()
  const storage = await openStorage(storageOptions(config))
  // reservations: in Redis when instances share one; in the database when they share
  // PostgreSQL and no Redis; in memory on one instance
  const ledger = cluster?.ledger ?? (storage.pg ? new PgLedger(storage.sql, undefined, undefined, config.database.takeAhead) : new MemoryLedger())
  const store = new MemoryStore()
  let s: Services
  // until the services hold them, a step that fails closes what was opened here (the ledger's
  // lock session and timers, the database): a start retried in-process leaves no pool behind
  try {
    // holds left by a gateway killed with requests open (this one before a restart) are looked for
    // before any admission, and go once their lock has been free a few seconds
    if (ledger instanceof PgLedger && storage.pg && config.database.url) {
      // the lock's session on a connection of its own: the pool's stay the requests', and taking
      // the lock again after a cut session never waits behind them
      const lockClient = new SQL({ url: config.database.url, max: 1, connectionTimeout: 5, idleTimeout: 0 })
      const released = await ledger.own(lockClient, true).catch(async (e) => {
        await lockClient.close().catch(() => {})
        throw e
      })
      if (released > 0) log.info('credit holds of gateways no longer running released', { holds: released })
    }
    s = assembleServices(config, storage, log, { ledger, limiter: new RateLimiter(store), recorder: { maxBacklog: config.generations.maxBacklog, spoolDir: join(config.dataDir, 'spool') }, cluster, metrics: true })
  } catch (e) {
    // the PostgreSQL ledger's timers and lock session (a cluster's ledger is closed with the cluster, by the caller)
    if (ledger instanceof PgLedger && ledger !== cluster?.ledger) await ledger.stop().catch(() => {})
    await storage.close().catch(() => {})
    throw e
  }
  // a step that fails lets go of what the ones before it took (the batch runner's lock, workers,
  // timers, the database), not only when the process exits
  try {
    const keys = s.keys
    // records a gateway killed while its database was away kept on disk, written before the keys'
    // spend is read (a spool the database cannot take yet is tried again in the background)
    await s.recorder.replaySpools()
    // every key in memory before anything admits (batches resume below)
    await keys.load()
    // batch results a gateway killed (or stopped) while its database was away kept on disk:
    // stored before the batches resume, which would fail their items as lost
    await replayResultSpools(s)
    if (cluster) {
      // no Redis on a shared PostgreSQL database: the change bus is LISTEN/NOTIFY
      if (storage.pg) await busOnPostgres(cluster, storage.pg, log)
      s.onClose.push(keys.attachBus(cluster.bus))
    }
    s.recorder.start(s.onClose)
    s.files.start(s.onClose)
    const batches = await new BatchService(s).start(s.onClose)
    const retention = new Retention({ config, log, threads: threadStoreOf(s), batches: batches.store, containers: s.containers }).start(s.onClose)
    // instances on one database hear of each other's new batches at once; on one SQLite data dir
    // sharing Redis, the one that runs them hears of those the others stored (and of their cancels)
    if (cluster && (storage.pg || cluster.redis)) s.onClose.push(batches.scheduler.attachBus(cluster.bus))
    const prune = setInterval(() => store.prune(steadyNow()), 60_000)
    prune.unref?.()
    s.onClose.push(() => clearInterval(prune))
    return Object.assign(s, { batches, retention, streams: new Set<AbortController>() })
  } catch (e) {
    await closeServices(s, undefined, undefined)
    throw e
  }
}

export interface Running {
  url: string
  port: number
  services: ServerServices
  /** The key created at first start (shown once), when one was created. */
  bootstrapKey?: string
  stop(): Promise<void>
}

/** First start with no keys: create SWITCHYARD_BOOTSTRAP_KEY as given, or generate one. */
export async function ensureBootstrapKey(s: Pick<Services, 'config' | 'keys'>): Promise<string | undefined> {
  if (await s.keys.hasAny()) return undefined
  return (await s.keys.createFirst({ name: 'bootstrap', key: s.config.bootstrapKey }))?.key
}

export async function startServer(config: Config, log?: Logger): Promise<Running> {
  const logger = log ?? createLogger(config.logLevel, undefined, config.logFormat)
  // one serving gateway per embedded data dir, when it shares no store with others (a database,
  // Redis, a bucket): db/data-dir-lock.ts
  const lock = sharesDataDir(config) ? undefined : lockDataDir(config.dataDir)
  const cluster = await createCluster(config, logger).catch((e) => {
    lock?.release()
    throw e
  })
  const services = await buildServices(config, logger, cluster).catch((e) => {
    cluster.close()
    lock?.release()
    throw e
  })
  // a start that fails from here on lets go of everything it took first (the port, the batch
  // runner's lock and workers, timers, the database, the data dir's lock): another gateway on
  // the data dir may take over at once, not when this process exits
  let server: ReturnType<typeof Bun.serve> | undefined
  let bootstrapKey: string | undefined
  try {
    services.onClose.push(await startCheckpointer(services.storage, services.log))
    // this thread's garbage (a batch's bookkeeping beside interactive traffic) is collected as it
    // grows, beside the running code: never a collection that stops the loop (lib/heap-bound.ts)
    services.onClose.push(boundHeap(REQUEST_HEAP_SLACK_BYTES, undefined, true))
    // key changes from other instances arrive on the bus (Redis, or LISTEN/NOTIFY on a shared
    // database); the poll stays for writers that do not publish: slower when the database is shared
    await services.keys.watch(services.storage.pg ? 5_000 : 1_000)
    setBodyPace(config.limits.bodyGraceS, config.limits.bodyMinBytesPerS)
    setBodyBudget(config.limits.bodyBudgetBytes)
    const handlers = generationHandlers(services)
    const app = createApp(services, handlers)
    const fetch = createPipeline(services, (req) => app.handle(req), directRoutes(directTable(handlers), services.log, KNOWN_FAILURES))
    server = serveOrSay({
      hostname: config.host,
      port: config.port,
      // Bun's own cap answers a bare 413 (no JSON, no request id) before any handler runs, so
      // it is set past any Content-Length Bun can parse (2^64 - 1). Every route that reads a
      // body reads it through a bounded reader that refuses with a JSON 413 from the declared
      // length, or while a chunked body arrives (http/body.ts, files/upload.ts); a body no
      // route reads is discarded by Bun as it arrives, never held.
      maxRequestBodySize: 2 ** 64 - 1,
      // a connection no key holds (keep-alive between requests, a request not yet authenticated,
      // /health) may sit idle this long; a request of a key, which may wait minutes for a long
      // generation's first byte, gets the longest Bun allows (front.ts)
      idleTimeout: config.limits.idleTimeoutS,
      fetch,
      error(e) {
        // Outside the pipeline: no request id was given out yet, so one is made here.
        const requestId = crypto.randomUUID()
        services.log.error('server error', { request_id: requestId, error: e?.stack ?? String(e) })
        return new Response(JSON.stringify({ error: `Internal error; quote request id ${requestId} to support` }), {
          status: 500,
          headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        })
      },
    })
    failStartIfAsked()
    // made once the port is ours: a start that fails before it leaves no key no one was shown
    bootstrapKey = await ensureBootstrapKey(services)
  } catch (e) {
    await server?.stop(true)
    await closeServices(services, cluster, lock)
    throw e
  }
  const listening = server
  // the token tables (tens of MiB) load now, off the request thread, not mid-way through the
  // first interrupted stream's recording (peak memory)
  if (config.tokenWorkers !== undefined) setTokenWorkers(config.tokenWorkers)
  preloadTokenizer()
  let stopped: Promise<void> | undefined
  const stop = () =>
    (stopped ??= (async () => {
      // stop accepting, let in-flight requests finish within the grace period
      const graceful = listening.stop(false)
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), config.shutdownGraceMs).unref?.())
      if ((await Promise.race([graceful.then(() => 'done' as const), timer])) === 'timeout') {
        services.cutting = true
        // each stream still open ends with its surface's error frame, then the connections close
        for (const open of services.streams ?? []) open.abort(stopCut())
        if (services.streams?.size) await Promise.race([graceful, Bun.sleep(CUT_FRAMES_MS)])
        await listening.stop(true)
        // each cut stream's record is made as its relay ends, which a busy machine may delay past
        // the frames' wait: the stores close only once they are made (or after a bound)
        await recordsOfCutStreams(services.streams)
      }
      await drainsEnded()
      await closeServices(services, cluster, lock)
    })())
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  return { url: `http://${host}:${listening.port}`, port: listening.port!, services, bootstrapKey, stop }
}

/** How long a stop waits for the streams it cut to make their records. */
const CUT_RECORDS_MS = 10_000

async function recordsOfCutStreams(streams: Set<unknown> | undefined): Promise<void> {
  const until = performance.now() + CUT_RECORDS_MS
  while (streams?.size && performance.now() < until) await Bun.sleep(10)
}

/** Everything start-up opened, closed in turn: the close hooks, keys, billing, the cluster, the database, and last the data dir's lock. */
async function closeServices(services: Services, cluster: Cluster | undefined, lock: DataDirLock | undefined) {
  for (const close of services.onClose) {
    try {
      await close()
    } catch (e) {
      services.log.warn('close hook failed', { error: String(e) })
    }
  }
  await services.keys.stop()
  await services.billing.stop()
  cluster?.close()
  await services.storage.close()
  lock?.release()
}

/** Bun.serve, or, when the address cannot be had (a port in use), the failure said plainly. */
function serveOrSay(options: Parameters<typeof Bun.serve>[0]) {
  try {
    return Bun.serve(options)
  } catch (e) {
    const where = `${(options as { hostname?: string }).hostname}:${(options as { port?: number }).port}`
    throw new ConfigError(`could not listen on ${where}: ${(e as Error)?.message ?? String(e)}${(e as { code?: string })?.code ? ` (${(e as { code: string }).code})` : ''}`)
  }
}
