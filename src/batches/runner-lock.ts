// Which process runs the batches of a SQLite data dir. Several gateways may serve from one data
// dir when they share Redis or a bucket (db/data-dir-lock.ts takes no `serve.lock` then), but
// SQLite's items in flight are only marked (marks.ts), with no claims as on PostgreSQL: two
// processes running a batch sent its items twice, and each one's start failed the other's
// marked items as lost. So one process runs them: the holder of `batches.lock` in the data dir
// (the same kind of lock as `serve.lock`, let go with the process, kill -9 included). The others
// store the batches they are given and try the lock every few seconds; a gateway alone on its
// data dir takes it at once.
import { tryLockFile, type DataDirLock } from '../db/data-dir-lock.ts'
import type { Logger } from '../http/log.ts'

export const RUNNER_LOCK = 'batches.lock'

export class RunnerLock {
  private lock: DataDirLock | null = null
  private timer?: ReturnType<typeof setInterval>

  constructor(
    private readonly dataDir: string,
    private readonly log: Logger,
  ) {}

  get held(): boolean {
    return this.lock !== null
  }

  /** → whether this process holds the lock now. */
  take(): boolean {
    this.lock ??= tryLockFile(this.dataDir, RUNNER_LOCK)
    return this.held
  }

  /** Tries the lock every `ms` until this process holds it, then calls `then` once. */
  wait(ms: number, then: () => void): void {
    this.timer = setInterval(() => {
      try {
        if (!this.take()) return
      } catch (e) {
        this.log.warn('batches: trying the batch runner lock failed; trying again', { error: (e as Error).message })
        return
      }
      clearInterval(this.timer)
      this.timer = undefined
      then()
    }, ms)
    this.timer.unref?.()
  }

  release(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.lock?.release()
    this.lock = null
  }
}
