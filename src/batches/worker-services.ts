// The services a batch worker runs items with: the same config, catalog, provider adapters,
// surfaces, media resolution and generation recorder as the main thread, on a database
// connection of its own. Admission happens on the main thread before an item is handed out;
// the worker's recorder writes the records and the keys' spend, and the spend it wrote goes
// back to the main thread's ledger (SpendLog) once the transaction has committed.
import { KeyStore } from '../auth/keys.ts'
import { MemoryStore, RateLimiter } from '../auth/ratelimit.ts'
import { buildCatalog } from '../config/catalog.ts'
import type { Config } from '../config/load.ts'
import { openStorage, type Storage } from '../db/client.ts'
import { storageOptions } from '../db/options.ts'
import { createFilesService } from '../files/create.ts'
import { Recorder } from '../generations/recorder.ts'
import { createLogger } from '../http/log.ts'
import { createMediaResolver, fetchPolicy } from '../media/resolve.ts'
import { createProviders } from '../providers/registry.ts'
import type { Services } from '../services.ts'
import { countOnThisThread, countThrough } from '../tokens/count.ts'
import type { Settled } from './types.ts'

/** The worker's key store: settles like any other, and keeps what it settled for the main thread. */
export class SpendLog extends KeyStore {
  private spend = new Map<string, number>()

  constructor(storage: Storage) {
    super(storage)
  }

  override settle(id: string, usd: number) {
    super.settle(id, usd)
    if (usd > 0) this.spend.set(id, (this.spend.get(id) ?? 0) + usd)
  }

  override unsettle(id: string, usd: number) {
    super.unsettle(id, usd)
    if (usd > 0) this.spend.set(id, (this.spend.get(id) ?? 0) - usd)
  }

  /** What was settled since the last call. */
  drain(): Settled {
    const out = [...this.spend].filter(([, usd]) => usd !== 0)
    this.spend.clear()
    return out
  }
}

export interface WorkerServices extends Services {
  keys: SpendLog
}

/** `tokens`: a port to the process's token worker (tokenPort()); without one, counting runs here. */
export async function buildWorkerServices(config: Config, tokens?: MessagePort): Promise<WorkerServices> {
  if (tokens) countThrough(tokens)
  else countOnThisThread()
  const log = createLogger(config.logLevel)
  // a few connections of its own on PostgreSQL: a worker's writes are batched
  const storage = await openStorage(storageOptions(config, 4))
  // the gateway's checkpoint worker checkpoints the WAL; a commit here never does it inline
  storage.sqlite?.exec('PRAGMA wal_autocheckpoint = 0')
  const catalog = buildCatalog(config)
  const keys = new SpendLog(storage)
  const s: WorkerServices = {
    config,
    storage,
    catalog,
    keys,
    limiter: new RateLimiter(new MemoryStore()),
    log,
    providers: createProviders(config),
    // not started: no pruning here, and its queue is flushed by the results writer
    recorder: new Recorder({ config, storage, catalog, keys, log }),
    files: createFilesService({ config, storage, log }),
    onClose: [],
  }
  s.media = createMediaResolver({ files: s.files, policy: fetchPolicy(config) })
  return s
}
