// The services a batch worker runs items with: the same config, catalog, provider adapters,
// surfaces, media resolution and generation recorder as the main thread, on a database
// connection of its own. Admission happens on the main thread before an item is handed out;
// the worker's recorder writes the records and the keys' spend, and the spend it stored goes
// back to the main thread's billing (its journal) once the transaction has committed.
import { assembleServices } from '../assemble.ts'
import { MemoryLedger } from '../billing/ledger.ts'
import { MemoryStore, RateLimiter } from '../auth/ratelimit.ts'
import type { Config } from '../config/load.ts'
import { openStorage } from '../db/client.ts'
import { storageOptions } from '../db/options.ts'
import { createLogger } from '../http/log.ts'
import type { Services } from '../services.ts'
import { countOnThisThread, countThrough } from '../tokens/count.ts'

/** `tokens`: a port to the process's token worker (tokenPort()); without one, counting runs here. */
export async function buildWorkerServices(config: Config, tokens?: MessagePort): Promise<Services> {
  if (tokens) countThrough(tokens)
  else countOnThisThread()
  const log = createLogger(config.logLevel, undefined, config.logFormat)
  // a few connections of its own on PostgreSQL: a worker's writes are batched
  const storage = await openStorage(storageOptions(config, 4))
  // the gateway's checkpoint worker checkpoints the WAL; a commit here never does it inline
  storage.sqlite?.exec('PRAGMA wal_autocheckpoint = 0')
  // not started: no pruning here, and the recorder's queue is flushed by the results writer
  return assembleServices(config, storage, log, { ledger: new MemoryLedger(), journal: true, limiter: new RateLimiter(new MemoryStore()) })
}
