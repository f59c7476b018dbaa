// The batch worker pool (main thread): `size` Bun Workers (config `batches.workers`, the CPU
// count by default), started on the first batch work and stopped after a minute without any,
// so an idle gateway carries none. A job goes to the worker with the fewest jobs; a worker
// that dies fails the jobs it held (the scheduler puts their items back, unless stored).
import type { Config } from '../config/load.ts'
import type { Logger } from '../http/log.ts'
import type { FromWorker, IngestJob, IngestResult, ItemDone, ItemJob, Settled, ToWorker } from './types.ts'

/** Bun's Worker can be unref'd: an idle pool never keeps the process alive. */
type BunWorker = Worker & { ref(): void; unref(): void }

/**
 * From source, the worker sits beside this file. In the compiled binary every bundled
 * module has the executable's URL, and the worker entry point is embedded at its path
 * below the bundle root (src/): `batches/worker`.
 */
function workerUrl(): string {
  return import.meta.url.includes('/$bunfs/') ? new URL('./batches/worker.ts', import.meta.url).href : new URL('./worker.ts', import.meta.url).href
}

interface Pending {
  resolve(v: unknown): void
  reject(e: Error): void
}

interface Slot {
  worker: BunWorker
  ready: Promise<void>
  jobs: Map<number, Pending>
  /** Items to send with the next message. */
  outbox: { id: number; job: ItemJob }[]
  dead: boolean
}

export interface PoolOptions {
  size: number
  config: Config
  log: Logger
  /** Stop the workers after this long without a job. */
  idleMs?: number
  /** Spend a worker wrote to keys' rows, for the main thread's ledger. */
  onSettled?: (settled: Settled) => void
}

export class WorkerPool {
  private slots: Slot[] = []
  private nextId = 1
  private idleTimer?: ReturnType<typeof setTimeout>
  private closed = false
  private readonly idleMs: number

  constructor(private readonly opts: PoolOptions) {
    this.idleMs = opts.idleMs ?? 60_000
  }

  /** Jobs handed out and not yet answered. */
  get inFlight(): number {
    let n = 0
    for (const s of this.slots) n += s.jobs.size
    return n
  }

  /** Live workers. */
  get size(): number {
    return this.slots.filter((s) => !s.dead).length
  }

  ingest(job: IngestJob): Promise<IngestResult> {
    return this.send({ type: 'ingest', id: 0, job }) as Promise<IngestResult>
  }

  /**
   * Items handed out in one turn of the loop go to a worker in one message. Resolves once
   * the item's result and records are stored, with the item's status.
   */
  run(job: ItemJob, maxRetries: number): Promise<ItemDone['status']> {
    return this.send((slot, id) => {
      slot.outbox.push({ id, job })
      if (slot.outbox.length > 1) return
      setImmediate(() => {
        const jobs = slot.outbox
        slot.outbox = []
        slot.ready.then(
          () => slot.worker.postMessage({ type: 'run', jobs, maxRetries } satisfies ToWorker),
          (e: Error) => jobs.forEach((j) => this.settle(slot, j.id, e)),
        )
      })
    }) as Promise<ItemDone['status']>
  }

  private send(dispatch: ToWorker | ((slot: Slot, id: number) => void)): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('batch worker pool is closed'))
    if (this.idleTimer) clearTimeout(this.idleTimer)
    this.idleTimer = undefined
    const slot = this.pick()
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      slot.jobs.set(id, { resolve, reject })
      slot.worker.ref()
      if (typeof dispatch === 'function') return dispatch(slot, id)
      slot.ready.then(
        () => slot.worker.postMessage({ ...dispatch, id }),
        (e: Error) => this.settle(slot, id, e),
      )
    })
  }

  private pick(): Slot {
    this.slots = this.slots.filter((s) => !s.dead)
    while (this.slots.length < Math.max(1, this.opts.size)) this.slots.push(this.spawn())
    let best = this.slots[0]!
    for (const s of this.slots) if (s.jobs.size < best.jobs.size) best = s
    return best
  }

  private spawn(): Slot {
    const worker = new Worker(workerUrl()) as BunWorker
    let ready!: () => void
    let failed!: (e: Error) => void
    const slot: Slot = { worker, ready: new Promise<void>((res, rej) => ((ready = res), (failed = rej))), jobs: new Map(), outbox: [], dead: false }
    slot.ready.catch(() => {})
    worker.onmessage = (e: MessageEvent<FromWorker>) => {
      const m = e.data
      if (m.type === 'ready') ready()
      else if (m.type === 'init-failed') {
        this.opts.log.error('batch worker could not start', { error: m.error })
        failed(new Error(`batch worker could not start: ${m.error.split('\n')[0]}`))
        this.kill(slot, 'could not start')
      } else if (m.type === 'ingested') this.settle(slot, m.id, undefined, m.result)
      else if (m.type === 'ran') {
        // the spend first: the reservations of these items go as their jobs resolve
        if (m.settled.length > 0) this.opts.onSettled?.(m.settled)
        for (const d of m.done) this.settle(slot, d.id, undefined, d.status)
      }
    }
    worker.onerror = (e) => {
      this.opts.log.error('batch worker failed', { error: e.message })
      failed(new Error(`batch worker failed: ${e.message}`))
      this.kill(slot, e.message)
    }
    worker.addEventListener('close', () => this.kill(slot, 'exited'))
    worker.postMessage({ type: 'init', config: this.opts.config } satisfies ToWorker)
    worker.unref()
    return slot
  }

  private settle(slot: Slot, id: number, error?: Error, value?: unknown) {
    const job = slot.jobs.get(id)
    if (!job) return
    slot.jobs.delete(id)
    if (slot.jobs.size === 0) slot.worker.unref()
    if (error) job.reject(error)
    else job.resolve(value)
    if (this.inFlight === 0 && !this.closed) {
      this.idleTimer = setTimeout(() => this.stopIdle(), this.idleMs)
      this.idleTimer.unref?.()
    }
  }

  /** A worker that is gone fails what it held. */
  private kill(slot: Slot, why: string) {
    if (slot.dead) return
    slot.dead = true
    for (const id of [...slot.jobs.keys()]) this.settle(slot, id, new Error(`batch worker ${why}`))
    slot.worker.terminate()
  }

  private stopIdle() {
    if (this.inFlight > 0) return
    for (const s of this.slots) this.stopSlot(s)
    this.slots = []
  }

  private async stopSlot(slot: Slot, waitMs = 2_000): Promise<void> {
    if (slot.dead) return
    const stopped = new Promise<void>((resolve) => {
      const t = setTimeout(resolve, waitMs)
      slot.worker.addEventListener('message', (e: MessageEvent<FromWorker>) => {
        if (e.data.type !== 'stopped') return
        clearTimeout(t)
        resolve()
      })
    })
    slot.worker.postMessage({ type: 'stop' } satisfies ToWorker)
    await stopped
    this.kill(slot, 'stopped')
  }

  /** Waits (at most `graceMs`) for jobs in flight, then stops every worker; later jobs are refused. */
  async close(graceMs = 5_000): Promise<void> {
    this.closed = true
    if (this.idleTimer) clearTimeout(this.idleTimer)
    const deadline = Date.now() + graceMs
    while (this.inFlight > 0 && Date.now() < deadline) await Bun.sleep(10)
    await Promise.all(this.slots.map((s) => this.stopSlot(s)))
    this.slots = []
  }
}
