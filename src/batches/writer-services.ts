// The results writer's services (writer-worker.ts): only what storing results uses — a database
// connection of its own, the catalog (the records' prices), billing (the keys' spend, kept in a
// journal for the main thread) and the recorder. Not the providers, surfaces, media, files or
// traces an item worker runs items with (worker-services.ts): each batch worker thread loads
// its own copy of every module it imports, so the writer imports only these.
import { KeyStore } from '../auth/keys.ts'
import { Billing } from '../billing/billing.ts'
import { MemoryLedger } from '../billing/ledger.ts'
import { buildCatalog } from '../config/catalog.ts'
import type { Config } from '../config/load.ts'
import { openStorage } from '../db/client.ts'
import { storageOptions } from '../db/options.ts'
import { Recorder } from '../generations/recorder.ts'
import { createLogger } from '../http/log.ts'
import type { Services } from '../services.ts'

export type WriterServices = Pick<Services, 'config' | 'log' | 'storage' | 'catalog' | 'billing' | 'recorder'>

export async function buildWriterServices(config: Config): Promise<WriterServices> {
  const log = createLogger(config.logLevel, undefined, config.logFormat)
  // a few connections of its own on PostgreSQL: its writes are batched
  const storage = await openStorage(storageOptions(config, 4))
  // the gateway's checkpoint worker checkpoints the WAL; a commit here never does it inline
  storage.sqlite?.exec('PRAGMA wal_autocheckpoint = 0')
  const catalog = buildCatalog(config)
  // as assembled on any thread (assemble.ts), with no cluster: a worker shares nothing with other instances
  const billing = new Billing({ keys: new KeyStore(storage), catalog, sql: storage.sql, onSharedDown: config.redis?.onError }, new MemoryLedger(), { journal: true })
  // not started: no pruning here, and the recorder's queue is flushed by the results writer
  const recorder = new Recorder({ config, storage, catalog, billing, log })
  return { config, log, storage, catalog, billing, recorder }
}
