// The services a batch worker runs items with: the same config, catalog, provider adapters,
// surfaces and media resolution as the main thread, on a database connection of its own.
// It keeps no ledger and writes no records: admission happens on the main thread before an
// item is handed out, and the item's records go back with its result (see scheduler.ts).
import { KeyStore } from '../auth/keys.ts'
import { MemoryStore, RateLimiter } from '../auth/ratelimit.ts'
import { buildCatalog } from '../config/catalog.ts'
import type { Config } from '../config/load.ts'
import { openStorage } from '../db/client.ts'
import { createFilesService } from '../files/create.ts'
import type { Recorder } from '../generations/recorder.ts'
import type { GenerationSink } from '../generations/types.ts'
import { createLogger } from '../http/log.ts'
import { createMediaResolver, fetchPolicy } from '../media/resolve.ts'
import { createProviders } from '../providers/registry.ts'
import type { Services } from '../services.ts'
import { countOnThisThread } from '../tokens/count.ts'

/** A worker's records are collected per item (run-item.ts); one made outside an item is a bug. */
const NO_RECORDER: GenerationSink = {
  record() {
    throw new Error('batch worker: a generation was recorded outside a batch item')
  },
  recordLater() {
    throw new Error('batch worker: a generation was recorded outside a batch item')
  },
}

export function buildWorkerServices(config: Config): Services {
  countOnThisThread()
  const log = createLogger(config.logLevel)
  const storage = openStorage(config.dataDir)
  const s: Services = {
    config,
    storage,
    catalog: buildCatalog(config),
    keys: new KeyStore(storage),
    limiter: new RateLimiter(new MemoryStore()),
    log,
    providers: createProviders(config),
    recorder: NO_RECORDER as unknown as Recorder,
    files: createFilesService({ config, storage, log }),
    onClose: [],
  }
  s.media = createMediaResolver({ files: s.files, policy: fetchPolicy(config) })
  return s
}
