// Everything the generation pipeline and a route plugin may use, built once at start (see
// server.ts) and handed to each plugin factory. Tests build it on a temp data dir. Batches
// are built on top of these (they run items through the pipeline), so they are not among
// them: the app takes them beside (app.ts AppServices).
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

export interface Services {
  config: Config
  storage: Storage
  catalog: Catalog
  keys: KeyStore
  /** Admission, charges and stored spend: the only way money moves. */
  billing: Billing
  limiter: RateLimiter
  log: Logger
  /** One set of provider adapters for every surface. */
  providers: ProviderRegistry
  recorder: Recorder
  files: FilesService
  /** Resolves file ids and media URLs before a generation goes upstream. */
  media?: MediaResolver
  /** What this instance shares with others (Redis); absent when built without one (tests of one part). */
  cluster?: Cluster
  /** Background timers and resources to stop on shutdown (each capability registers its own). */
  onClose: (() => void | Promise<void>)[]
}

/** What the generation pipeline uses: the models, the providers, billing, the recorder and media. */
export type GenerationServices = Pick<Services, 'config' | 'catalog' | 'providers' | 'billing' | 'recorder' | 'files' | 'media' | 'log'>

/** What the responses surface keeps beside the pipeline: its threads' store. */
export type ThreadServices = Pick<Services, 'config' | 'storage' | 'onClose'>
