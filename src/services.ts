// The services, grouped by who owns them: each slice below is named once, with who owns it and
// who takes it. They are built together in one place (assemble.ts) on the request thread
// (server.ts) and in a batch item worker (batches/worker-services.ts); only those hold the whole
// `Services`, every other module takes the slice it uses (one of these, or a `Pick`).
// Tests build them on a temp data dir. The batch service is built on top of these (it runs
// items through the pipeline), so it is not among them: the app takes it beside (app.ts).
import type { Catalog } from './config/catalog.ts'
import type { Config } from './config/load.ts'
import type { Storage } from './db/client.ts'
import type { KeyStore } from './auth/keys.ts'
import type { Billing } from './billing/billing.ts'
import type { RateLimiter } from './auth/ratelimit.ts'
import type { Logger } from './http/log.ts'
import type { Recorder } from './generations/recorder.ts'
import type { FilesService } from './files/service.ts'
import type { ProviderRegistry } from './providers/registry.ts'
import type { MediaResolver } from './pipeline/surface.ts'
import type { Cluster } from './cluster/create.ts'
import type { DeploymentHealth } from './routing/health.ts'
import type { GenerationObserver } from './pipeline/observe.ts'
import type { Tracing } from './tracing/tracing.ts'
import type { GatewayMetrics } from './metrics/gateway.ts'
import type { CacheStore } from './cache/store.ts'
import type { ContainerGrants } from './containers/grants.ts'

/** The base every part gets, made at start-up (server.ts, a batch worker): the settings, the log, the database, what to stop on shutdown. */
export interface BaseServices {
  config: Config
  log: Logger
  storage: Storage
  /** The database's health for /health (db/unavailable.ts): from the last probe, at most one a second. */
  storeHealth: () => { database: 'up' | 'down' }
  /** Background timers and resources to stop on shutdown (each capability registers its own). */
  onClose: (() => void | Promise<void>)[]
  /** This thread's traces of generations and batches (OTEL_* variables); none: nothing is traced. */
  tracing?: Tracing
  /** What GET /metrics shows (the request thread's; none in a batch worker, whose items the scheduler counts). */
  metrics?: GatewayMetrics
}

/** Generation's (the pipeline and the surfaces; the generation routes and batch items take it): models, providers, billing, the recorder, files, media. */
export interface GenerationServices extends Pick<BaseServices, 'config' | 'log'> {
  catalog: Catalog
  /** One set of provider adapters for every surface. */
  providers: ProviderRegistry
  /** Which deployments rest after failures, and each one's last hour. */
  health: DeploymentHealth
  /** What watches each generation (metrics, traces); none: nothing is watched. */
  observe?: GenerationObserver
  /** Admission, charges and stored spend: the only way money moves. */
  billing: Billing
  recorder: Recorder
  files: FilesService
  /** Resolves file ids and media URLs before a generation goes upstream. */
  media?: MediaResolver
  /** The code-execution containers each key was given: a request names only those by id (containers/). Absent: none is checked. */
  containers?: ContainerGrants
  /** The exact response cache's store (DELETE /admin/v1/cache empties it). */
  cache?: CacheStore
  /** Set when a stop's grace has run out and the streams still open are cut: theirs is not a client's leaving. */
  cutting?: boolean
  /** The streams open now (their calls' controllers): a stop whose grace ran out ends each with its error frame before it closes the connections. */
  streams?: Set<AbortController>
}

/** The responses surface's stored threads (surfaces/responses; its routes and batch items on /v1/responses take it). */
export type ThreadServices = Pick<BaseServices, 'config' | 'storage' | 'onClose' | 'log'>

/** Admission at the front (src/auth's keys and limits; front.ts takes it): who calls, how often, what instances share. */
export interface AdmissionServices extends Pick<BaseServices, 'config' | 'log' | 'metrics'> {
  /**
   * The embedded database's files are gone or were replaced under the running gateway (or it
   * cannot be read): every write would go where no one reads it, so nothing that writes is
   * taken. Absent on PostgreSQL, whose failures each statement reports itself.
   */
  storeLost?: () => boolean
  keys: KeyStore
  limiter: RateLimiter
  /** What this instance shares with others (Redis); absent when built without one (tests of one part). */
  cluster?: Cluster
}

/** Batches' on the main thread (the batch service and its scheduler): items admitted on billing under a live key, files read and written. */
export type BatchServices = Pick<BaseServices, 'config' | 'log' | 'storage' | 'metrics' | 'tracing'> & Pick<GenerationServices, 'catalog' | 'billing' | 'files'> & Pick<AdmissionServices, 'keys'>

/** The dashboard's data routes (ui/data-routes.ts): keys, generation records, settings, the catalog's deployments and their health. */
export type DashboardServices = Pick<BaseServices, 'config' | 'storage'> & Pick<GenerationServices, 'recorder' | 'catalog' | 'health'> & Pick<AdmissionServices, 'keys'>

/** Every slice together: what assemble.ts builds, held whole only by start-up (server.ts) and a batch worker thread. */
export interface Services extends BaseServices, GenerationServices, AdmissionServices {}
