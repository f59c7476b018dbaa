// The batch worker pool (main thread): `size` item workers (config `batches.workers`, the
// CPU count by default) that check new batches and run items, at a lower CPU priority than
// the request thread, and one results writer at normal priority that stores their outcomes
// (writer-worker.ts, results-writer.ts). Each item worker hands its outcomes straight to the writer over a
// MessageChannel; the writer tells this thread which items are stored and what spend it
// wrote. Keeping every batch write on one thread that is never deprioritised means a write
// transaction is never left holding SQLite's write lock while its thread waits for a CPU (the
// request thread's own writes would wait behind it).
//
// Workers start with the first batch work and stop after a minute without any, so an idle
// gateway carries none. A job goes to the item worker with the fewest jobs. A worker that cannot
// start (its database refuses another connection, say) fails its jobs with a WorkerStartError:
// none of them reached a worker, and the next start waits a little longer each time, up to
// START_BACKOFF_MAX_MS. A job is the worker's once posted to it (it takes its messages in order,
// so a job posted before the stop runs); one still in a slot's outbox when its worker goes
// (stopped, or waiting for its start) fails with a NotTakenError: it never ran.
// An item worker says, one message a turn, which of its jobs are about to make their first
// upstream call, before any of them makes it. One that dies (crashed, exited, or terminated at a
// stop) is answered for once its thread has closed (Bun delivers what a thread posted before its
// close event; its onerror may come before some of it): a job whose call may have begun fails
// with a CallStartedError (it may have reached the upstream: never sent again), one whose call
// never began with a NotTakenError (it never left). A writer that dies takes the whole pool with it.
import { tokenPort } from '../tokens/count.ts'
import type { AdmitAsk } from '../billing/admission.ts'
import type { Config } from '../config/load.ts'
import type { Logger } from '../http/log.ts'
import type { FromWorker, IngestJob, IngestResult, ItemDone, ItemJob, Settled, ToWorker } from './types.ts'
import { startWorker } from '../lib/worker-url.ts'
import type { RecordTotals } from '../metrics/batches.ts'

/** A job its worker never took (still in the outbox when it went), or an item whose upstream call it never began: it never left, and runs again. */
export class NotTakenError extends Error {}

/** The jobs of a worker that never started: none of them ran, so none counts as lost with its worker. */
export class WorkerStartError extends NotTakenError {}

/** An item job whose worker died after its upstream call may have begun: it may have reached the upstream. */
export class CallStartedError extends Error {}

/** How long the start after a failed one waits: 250 ms, doubled at each failure in a row, at most this. */
const START_BACKOFF_MAX_MS = 5_000
/**
 * How long a worker that died or was terminated is given to close (a few ms, measured): until then
 * what it said of its jobs may still be on its way. Past it, every job posted to it counts as called.
 */
const CLOSE_WAIT_MS = 2_000

/** Bun's Worker can be unref'd: an idle pool never keeps the process alive. */
type BunWorker = Worker & { ref(): void; unref(): void }


interface Pending {
  resolve(v: unknown): void
  reject(e: Error): void
  /** An item's: holds a fallback model's price for it when its worker asks (resolves whether it is held). */
  hold?: ItemHolder
  /** Posted to its worker: it may have run. */
  posted?: boolean
  /** An item's: its worker said its first upstream call was about to begin. */
  called?: boolean
  item?: boolean
  /** An item's batch and index, for the journal of items sent. */
  at?: CalledItem
}

export type ItemHolder = (ask: AdmitAsk) => Promise<boolean>

/** An item whose first upstream call is about to begin. */
export interface CalledItem {
  batchId: string
  idx: number
}

interface Thread {
  worker: BunWorker
  ready: Promise<void>
  /** Ready came: a job given to it may have run. */
  started: boolean
  dead: boolean
  /** Its close event came: nothing more of what it posted is on its way. */
  closed: Promise<void>
  /** Fails `ready` (nothing once it came): a thread stopped or gone before it started must still answer whoever waits for it. */
  abort(e: Error): void
}

interface Slot extends Thread {
  jobs: Map<number, Pending>
  /** Items to send with the next message. */
  outbox: { id: number; job: ItemJob }[]
  /** Told to stop: it is posted nothing more. */
  stopping: boolean
  /** Dead: resolves once its jobs are answered (kill). */
  gone?: Promise<void>
}

export interface PoolOptions {
  size: number
  config: Config
  log: Logger
  /** Stop the workers after this long without a job. */
  idleMs?: number
  /** Spend the writer wrote to keys' rows, for the main thread's figures; the items' jobs resolve once it has taken it. */
  onSettled?: (settled: Settled) => void | Promise<void>
  /** With a shared ledger: spend a write of the writer may store; its transaction begins once this resolves. */
  onStoring?: (settled: Settled) => Promise<void>
  /** What `onStoring` was given and its write did not store after all. */
  onNotStored?: (settled: Settled) => void
  /** The tokens and cost of the records the writer stored (the metrics count batch work too). */
  onRecords?: (records: RecordTotals[]) => void
  /**
   * A result the writer stored for an item whose job is no longer held here: its worker died
   * meanwhile and the job was failed, but the item ended with this result (its lost failure
   * stores nothing, the item has one): its end, for the metrics.
   */
  onStoredLate?: (status: ItemDone['status']) => void
}

export class WorkerPool {
  private slots: Slot[] = []
  private writer?: Thread
  /** Which item worker holds a job. */
  private readonly owner = new Map<number, Slot>()
  private nextId = 1
  private idleTimer?: ReturnType<typeof setTimeout>
  private closed = false
  private readonly idleMs: number
  /** Starts that failed in a row, and when the next may begin. */
  private startFailures = 0
  private nextStartAt = 0
  /**
   * Names items in the journal of items sent before their first upstream call (the scheduler's,
   * sent-journal.ts). → whether it could (a worker fails one it could not, never sent).
   */
  journal?: (items: CalledItem[]) => boolean

  constructor(private readonly opts: PoolOptions) {
    this.idleMs = opts.idleMs ?? 60_000
  }

  /** Jobs handed out and not yet answered. */
  get inFlight(): number {
    return this.owner.size
  }

  /** Live item workers. */
  get size(): number {
    return this.slots.filter((s) => !s.dead).length
  }

  /**
   * The workers started, where they are not, and ready to take a job: what the scheduler waits
   * for before it claims items on a shared database, where a claim is taken for sent (leases.ts).
   * Resolves whether they did: a worker that cannot start fails the jobs later sent to it.
   */
  warm(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false)
    this.pick()
    // started for a claim that may find nothing (another instance holds the batch's places): they
    // stop after idleMs without a job once ready, as after one (counted from their start, a slow
    // start on a busy machine stopped them before the claim they were started for)
    const idle = () => {
      if (this.closed || this.inFlight > 0 || this.idleTimer) return
      this.idleTimer = setTimeout(() => this.stopIdle(), this.idleMs)
      this.idleTimer.unref?.()
    }
    return Promise.all([this.writer?.ready, ...this.slots.map((s) => s.ready)]).then(
      () => (idle(), true),
      () => (idle(), false),
    )
  }

  ingest(job: IngestJob): Promise<IngestResult> {
    return this.send({ type: 'ingest', id: 0, job }) as Promise<IngestResult>
  }

  /**
   * Items handed out in one turn of the loop go to a worker in one message. Resolves once
   * the item's result and records are stored, with the item's status (null: the item had a
   * result already, stored and counted by whoever stored it). `hold` answers its
   * worker's asks to hold a fallback model for it.
   */
  run(job: ItemJob, maxRetries: number, hold?: ItemHolder): Promise<ItemDone['status'] | null> {
    return this.send((slot, id) => {
      const pending = slot.jobs.get(id)!
      pending.hold = hold
      pending.item = true
      pending.at = { batchId: job.batchId, idx: job.idx }
      slot.outbox.push({ id, job })
      if (slot.outbox.length > 1) return
      setImmediate(() => {
        const jobs = slot.outbox
        slot.outbox = []
        slot.ready.then(
          () => {
            // a worker told to stop meanwhile would take them after its stop: never sent
            if (slot.stopping || slot.dead) return jobs.forEach((j) => this.settle(j.id, new NotTakenError('batch worker stopped before it took the item')))
            this.posted(slot, jobs)
            slot.worker.postMessage({ type: 'run', jobs, maxRetries } satisfies ToWorker)
          },
          (e: Error) => jobs.forEach((j) => this.settle(j.id, e)),
        )
      })
    }) as Promise<ItemDone['status'] | null>
  }

  private send(dispatch: ToWorker | ((slot: Slot, id: number) => void)): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('batch worker pool is closed'))
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = undefined
    const slot = this.pick()
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      slot.jobs.set(id, { resolve, reject })
      this.owner.set(id, slot)
      slot.worker.ref()
      if (typeof dispatch === 'function') return dispatch(slot, id)
      slot.ready.then(
        () => {
          this.posted(slot, [{ id }])
          slot.worker.postMessage({ ...dispatch, id })
        },
        (e: Error) => this.settle(id, e),
      )
    })
  }

  private posted(slot: Slot, jobs: { id: number }[]) {
    for (const j of jobs) {
      const job = slot.jobs.get(j.id)
      if (job) job.posted = true
    }
  }

  private pick(): Slot {
    this.slots = this.slots.filter((s) => !s.dead)
    if (!this.writer || this.writer.dead) this.writer = this.spawnWriter()
    while (this.slots.length < Math.max(1, this.opts.size)) this.slots.push(this.spawnItems(this.writer))
    let best = this.slots[0]!
    for (const s of this.slots) if (s.jobs.size < best.jobs.size) best = s
    return best
  }

  /** `entry`: the item worker's (worker.ts) or the results writer's (writer-worker.ts), each loading only the modules of its role. */
  private thread(entry: string, onMessage: (m: FromWorker) => void, onDeath: (why: string) => void): Thread {
    const worker = startWorker(import.meta.url, entry) as BunWorker
    let ready!: () => void
    let failed!: (e: Error) => void
    const closed = new Promise<void>((res) => worker.addEventListener('close', () => res()))
    const t: Thread = { worker, ready: new Promise<void>((res, rej) => ((ready = res), (failed = rej))), started: false, dead: false, closed, abort: (e) => failed(e) }
    t.ready.catch(() => {})
    worker.onmessage = (e: MessageEvent<FromWorker>) => {
      const m = e.data
      if (m.type === 'ready') ready()
      else if (m.type === 'init-failed') {
        this.startFailures++
        const wait = Math.min(START_BACKOFF_MAX_MS, 250 * 2 ** (this.startFailures - 1))
        this.nextStartAt = Date.now() + wait
        this.opts.log.error('batch worker could not start; the next start waits', { error: m.error, wait_ms: wait })
        failed(new WorkerStartError(`batch worker could not start: ${m.error.split('\n')[0]}`))
        onDeath('could not start')
      } else onMessage(m)
    }
    worker.onerror = (e) => {
      this.opts.log.error('batch worker failed', { error: e.message })
      // seen only by those waiting for a start that never came: none of their jobs ran
      failed(new WorkerStartError(`batch worker failed: ${e.message}`))
      onDeath(e.message)
    }
    worker.addEventListener('close', () => onDeath('exited'))
    worker.unref()
    return t
  }

  private spawnWriter(): Thread {
    const t: Thread = this.thread(
      'batches/writer-worker.ts',
      (m) => {
        if (m.type === 'storing') {
          // answered whatever comes of it: the ledger never holds a write back for long (its store's timeout)
          const counted = () => void (t.dead || t.worker.postMessage({ type: 'counted', n: m.n } satisfies ToWorker))
          void (this.opts.onStoring?.(m.settled) ?? Promise.resolve()).then(counted, counted)
          return
        }
        if (m.type === 'not-stored') return this.opts.onNotStored?.(m.settled)
        if (m.type !== 'ran') return
        // the spend first: the reservations of these items go as their jobs resolve
        const shown = m.settled.length > 0 ? this.opts.onSettled?.(m.settled) : undefined
        if (m.records.length > 0) this.opts.onRecords?.(m.records)
        for (const d of m.done) if (d.stored && !this.owner.has(d.id)) this.opts.onStoredLate?.(d.status)
        // a job resolves with its item's end, or null when this write stored none (another had)
        const end = (d: ItemDone) => (d.stored ? d.status : null)
        if (!shown) for (const d of m.done) this.settle(d.id, undefined, end(d))
        else {
          // taken now (a worker that dies meanwhile does not fail them), answered once it is shown
          const jobs = m.done.map((d) => [this.take(d.id), end(d)] as const)
          void shown.finally(() => jobs.forEach(([job, status]) => job?.resolve(status)))
        }
      },
      (why) => {
        if (t.dead) return
        t.dead = true
        t.abort(new WorkerStartError(`batch results writer ${why}`))
        t.worker.terminate()
        // what it had not stored is lost with it: every item worker goes too (their items whose
        // upstream call had begun fail as lost, the others run again)
        for (const s of this.slots) void this.kill(s, `results writer ${why}`)
      },
    )
    this.whenMayStart(t, () => t.worker.postMessage({ type: 'init', config: this.opts.config, role: 'writer' } satisfies ToWorker))
    return t
  }

  private spawnItems(writer: Thread): Slot {
    const ch = new MessageChannel()
    const slot = this.thread(
      'batches/worker.ts',
      (m) => {
        if (m.type === 'ingested') this.settle(m.id, undefined, m.result)
        else if (m.type === 'calling') this.calling(slot, m.ids, m.n)
        else if (m.type === 'hold') this.hold(slot, m.id, m.n, m.ask)
      },
      (why) => void this.kill(slot, why),
    ) as Slot
    slot.jobs = new Map()
    slot.outbox = []
    slot.stopping = false
    // no item runs before the writer can take its outcome (its start, a database connection,
    // may take longer than the item worker's): an outcome it dropped would send the item again
    // (the waits between starts end only once a worker and the writer both started: one that
    // starts beside one the database keeps refusing does not bring them back to 250 ms)
    slot.ready = Promise.all([slot.ready, writer.ready]).then(() => {
      slot.started = true
      this.startFailures = 0
    })
    slot.ready.catch(() => {})
    writer.worker.postMessage({ type: 'outcomes', port: ch.port2 } satisfies ToWorker, [ch.port2])
    // one set of token tables a process: the item worker counts through the token worker
    const tokens = tokenPort() ?? undefined
    this.whenMayStart(slot, () => slot.worker.postMessage({ type: 'init', config: this.opts.config, role: 'items', port: ch.port1, tokens } satisfies ToWorker, tokens ? [ch.port1, tokens] : [ch.port1]))
    return slot
  }

  /** A start right away, unless the last one failed: then once its wait is over. */
  private whenMayStart(t: Thread, start: () => void) {
    const wait = this.nextStartAt - Date.now()
    if (wait <= 0) return start()
    // (a stop meanwhile terminates the worker, and fails its ready: the start is not made)
    setTimeout(() => this.closed || t.dead || start(), wait).unref?.()
  }

  /**
   * Jobs whose first upstream call their worker is about to make: from now on they may have
   * reached the upstream. Named in the journal of items sent (`journal`) before the worker is
   * told to go on.
   */
  private calling(slot: Slot, ids: number[], n: number) {
    const items: CalledItem[] = []
    for (const id of ids) {
      const job = slot.jobs.get(id)
      if (!job) continue
      job.called = true
      if (job.at) items.push(job.at)
    }
    const ok = items.length === 0 || (this.journal?.(items) ?? true)
    if (!slot.dead) slot.worker.postMessage({ type: 'journaled', n, ok } satisfies ToWorker)
  }

  /** A worker asks to hold a fallback model for its job's item: not held once the job is gone. */
  private hold(slot: Slot, id: number, n: number, ask: AdmitAsk) {
    const holder = slot.jobs.get(id)?.hold
    const answer = (ok: boolean) => {
      if (!slot.dead) slot.worker.postMessage({ type: 'held', n, ok } satisfies ToWorker)
    }
    if (!holder) return answer(false)
    holder(ask).then(answer, () => answer(false))
  }

  private settle(id: number, error?: Error, value?: unknown) {
    const job = this.take(id)
    if (!job) return
    if (error) job.reject(error)
    else job.resolve(value)
  }

  /** A job no worker holds any more (undefined when none did): its answer is the caller's to give. */
  private take(id: number): Pending | undefined {
    const slot = this.owner.get(id)
    const job = slot?.jobs.get(id)
    if (!slot || !job) return undefined
    slot.jobs.delete(id)
    this.owner.delete(id)
    if (slot.jobs.size === 0) slot.worker.unref()
    if (this.inFlight === 0 && !this.closed) {
      this.idleTimer = setTimeout(() => this.stopIdle(), this.idleMs)
      this.idleTimer.unref?.()
    }
    return job
  }

  /**
   * An item worker that is gone (or going) fails what it held, once its thread has closed: what
   * it posted before is heard by then, so a job it said it was calling upstream for is known.
   */
  private kill(slot: Slot, why: string): Promise<void> {
    if (slot.dead) return slot.gone!
    slot.dead = true
    // a worker that never started was given none of them
    slot.abort(new WorkerStartError(`batch worker ${why}`))
    slot.worker.terminate()
    const closed = slot.closed.then(() => true)
    const late = Bun.sleep(CLOSE_WAIT_MS).then(() => false)
    slot.gone = Promise.race([closed, late]).then((heard) => {
      // unheard from (no close in time): any job posted to it may have been called for
      if (!heard) this.opts.log.warn('batch worker did not close in time; its items posted count as sent', { wait_ms: CLOSE_WAIT_MS })
      const error = (job: Pending): Error => {
        if (!slot.started) return new WorkerStartError(`batch worker ${why}`)
        if (!job.posted) return new NotTakenError(`batch worker ${why} before it took the item`)
        if (!job.item) return new Error(`batch worker ${why}`)
        if (job.called || !heard) return new CallStartedError(`batch worker ${why} with the item's upstream call begun`)
        return new NotTakenError(`batch worker ${why} before the item's upstream call began`)
      }
      for (const [id, job] of [...slot.jobs]) this.settle(id, error(job))
    })
    return slot.gone
  }

  private stopIdle() {
    if (this.inFlight > 0) return
    void this.stopAll()
  }

  private async stop(t: Thread, waitMs = 2_000): Promise<void> {
    if (t.dead) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs)
      t.worker.addEventListener('message', (e: MessageEvent<FromWorker>) => {
        if (e.data.type !== 'stopped') return
        clearTimeout(timer)
        resolve()
      })
      t.worker.postMessage({ type: 'stop' } satisfies ToWorker)
    })
  }

  /** Item workers first (they hand the writer what they have), then the writer (it stores it). */
  private async stopAll() {
    const slots = this.slots
    const writer = this.writer
    this.slots = []
    this.writer = undefined
    for (const s of slots) s.stopping = true
    await Promise.all(slots.map((s) => this.stop(s)))
    await Promise.all(slots.map((s) => this.kill(s, 'stopped')))
    if (writer) {
      await this.stop(writer)
      writer.dead = true
      writer.abort(new WorkerStartError('batch results writer stopped'))
      writer.worker.terminate()
    }
  }

  /** Waits (at most `graceMs`) for jobs in flight, then stops every worker; later jobs are refused. */
  async close(graceMs = 5_000): Promise<void> {
    this.closed = true
    if (this.idleTimer) clearTimeout(this.idleTimer)
    const deadline = Date.now() + graceMs
    while (this.inFlight > 0 && Date.now() < deadline) await Bun.sleep(10)
    await this.stopAll()
  }
}
