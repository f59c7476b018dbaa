// The batches capability as the routes see it: create (the items checked and stored by a
// worker, then the batch row), find, list and cancel, always on behalf of one key.
import type { ApiKey } from '../http/context.ts'
import { echo, HttpError, notFound } from '../http/errors.ts'
import type { BatchServices } from '../services.ts'
import { goneHow, INPUT_GONE, inputFileGone, inputGoneMessage } from './input-file.ts'
import { WorkerPool, WorkerStartError } from './pool.ts'
import { Scheduler } from './scheduler.ts'
import { BatchStore, IngestSwept } from './store.ts'
import type { BatchFamily, BatchRow } from './types.ts'

const DAY_MS = 86_400_000
const ID_PREFIX: Record<BatchFamily, string> = { openai: 'batch_', anthropic: 'msgbatch_' }

export class BatchService {
  readonly store: BatchStore
  readonly pool: WorkerPool
  readonly scheduler: Scheduler

  constructor(private readonly s: BatchServices) {
    this.store = new BatchStore(s.storage)
    this.pool = new WorkerPool({
      size: s.config.batches.workers,
      config: s.config,
      log: s.log,
      onSettled: (settled) => s.billing.fromWorker(settled),
      onStoring: (settled) => s.billing.workerStoring(settled),
      onNotStored: (settled) => s.billing.workerNotStored(settled),
      onRecords: (records) => s.metrics?.batches.records(records),
      onStoredLate: (status) => s.metrics?.batches.item(status),
    })
    this.scheduler = new Scheduler(s, this.store, this.pool)
    // each running item holds at most one upstream call
    if (s.metrics) s.metrics.load.batchItems = () => this.scheduler.inFlight
  }

  /** Resume open batches, hear about deleted files, stop with the gateway. */
  async start(onClose: (() => void | Promise<void>)[]): Promise<this> {
    // heard from before the start-up look at the open batches' files: a file the expiry pass
    // removes while that look goes on is failed by the one or the other
    const off = this.s.files.onFileDeleted((file, reason) => this.scheduler.onFileDeleted(file, reason))
    // before the start: one that fails half-way (the runner's lock taken, a worker begun) is closed too
    onClose.push(async () => {
      off()
      await this.scheduler.close(Math.min(this.s.config.shutdownGraceMs, 10_000))
    })
    await this.scheduler.start()
    return this
  }

  /** Checks the create body and its items off the main thread, then creates the batch. */
  async create(family: BatchFamily, key: ApiKey, text: string): Promise<BatchRow> {
    if (text.trim() === '') throw new HttpError(400, 'Request body is empty: expected a JSON object')
    const id = ID_PREFIX[family] + Bun.randomUUIDv7().replaceAll('-', '')
    const createdAt = Date.now()
    let result
    try {
      result = await this.pool.ingest({ batchId: id, family, apiKey: key, text, maxItems: this.s.config.batches.maxItems })
    } catch (e) {
      void this.store.deleteItems(id).catch(() => {})
      // a worker that cannot start is tried again within 5 s (pool.ts); why is in the log, not
      // for the client (it names the database's host)
      const why = e instanceof WorkerStartError ? 'a batch worker could not start' : 'a batch worker failed'
      if (!(e instanceof WorkerStartError)) this.s.log.error('batches: a create lost its worker', { batch_id: id, error: (e as Error).message })
      throw new HttpError(503, `batch workers are unavailable: ${why}; nothing was created, retry shortly`, { 'retry-after': '5' })
    }
    if (!result.ok) throw new HttpError(result.status, result.message, result.status === 503 ? { 'retry-after': '5' } : undefined)
    const env = result.envelope
    // the file may have gone while its lines were read: then the batch is never made
    const file = env.inputFileId === null ? null : await this.s.files.get(key.id, env.inputFileId)
    if (env.inputFileId !== null && !file) {
      void this.store.deleteItems(id).catch(() => {})
      const why = await inputFileGone(this.s.files, key.id, env.inputFileId)
      throw new HttpError(400, `input_file_id: while the batch was being created, the file ${echo(env.inputFileId)} ${goneHow(why ?? 'unknown')}`)
    }
    const row: BatchRow = {
      id,
      apiKeyId: key.id,
      family,
      endpoint: env.endpoint,
      inputFileId: env.inputFileId,
      completionWindow: env.completionWindow,
      status: 'queued',
      metadata: env.metadata,
      concurrency: env.concurrency,
      outputExpiresAfter: env.outputExpiresAfter,
      total: result.total,
      succeeded: 0,
      failed: 0,
      cancelledItems: 0,
      expiredItems: 0,
      errors: null,
      outputFileId: null,
      errorFileId: null,
      createdAt,
      expiresAt: createdAt + DAY_MS,
      inProgressAt: null,
      completedAt: null,
      cancelledAt: null,
      failedAt: null,
      expiredAt: null,
      endedAt: null,
      finalizer: null,
      finalizerUntil: null,
      claimWaiter: null,
      claimWaiterUntil: null,
      itemsPrunedAt: null,
    }
    try {
      await this.store.insert(row)
    } catch (e) {
      if (!(e instanceof IngestSwept)) throw e
      void this.store.deleteItems(id).catch(() => {})
      this.s.log.warn('batches: a create outlived its marker (taken for a crash\'s by a sweep); refused', { batch_id: id })
      throw new HttpError(503, 'the batch could not be stored now; nothing was created, retry shortly', { 'retry-after': '5' })
    }
    // A delete of the file (here or on another instance) that came after the look above looked
    // for the batches reading it before this row was in, and missed it. Each side looks after its
    // own write: that delete's look finds the batch, or this one finds the file gone.
    const why = file ? await inputFileGone(this.s.files, key.id, file.id, file.expiresAt) : null
    if (why) await this.scheduler.fail(id, INPUT_GONE, inputGoneMessage(file!.id, why))
    else this.scheduler.add(row)
    return (await this.store.byId(id)) ?? row
  }

  /** The key's batch, or a 404 (another key's batch is simply not found). */
  async find(owner: string, id: string | null | undefined, family?: BatchFamily): Promise<BatchRow> {
    const row = typeof id === 'string' ? await this.store.get(owner, id, family) : null
    if (!row) throw notFound(`No such batch: ${echo(id)}`)
    return row
  }

  async cancel(owner: string, id: string, family?: BatchFamily): Promise<BatchRow> {
    return this.scheduler.cancel(await this.find(owner, id, family))
  }
}
