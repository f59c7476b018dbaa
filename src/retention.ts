// What the gateway keeps for a while and then removes, beside records (the recorder prunes
// those): stored responses, a day past `responses.retention_days` (OpenAI keeps a response 30
// days; the thread store refuses to continue one past it) unless a later one continues them, and
// the items of ended batches (their request bodies and results), `batches.retention_days` after
// the batch ended (Anthropic keeps a message batch's results 29 days); the batch's row, counts
// and output files stay. 0 days keeps them until they are deleted. And the grants of containers
// past their expiry (containers/grants.ts), which name nothing a request may use: whatever the
// settings. Removed in small steps off the request path, soon after start and then hourly.
import type { BatchStore } from './batches/store.ts'
import type { Config } from './config/load.ts'
import type { Logger } from './http/log.ts'
import { pruneInSteps, type PruneStep } from './lib/prune-steps.ts'
import { PRUNE_GRACE_MS, type ThreadStore } from './surfaces/responses/thread.ts'
import type { ContainerGrants } from './containers/grants.ts'

const DAY_MS = 86_400_000
/**
 * Stored responses one step reads, and batch items one step deletes. Each row is kilobytes of
 * text: on a large SQLite file whose pages are not in memory a step waits for the disk, on the
 * thread that serves requests (an 11 GB file: steps of 100 responses held it 150-630 ms).
 */
const RESPONSES_CHUNK = 25
export const ITEMS_CHUNK = 200
/** Container grants one step deletes (a few dozen bytes each). */
const GRANTS_CHUNK = 500

interface Job {
  what: string
  days: number
  /** Taken this much past the retention. */
  graceMs: number
  /** Runs whatever `days` is (0: its rows say themselves when they end). */
  always?: boolean
  /** One pass's steps, over what was made (or ended) before `before`. */
  pass(before: number, now: number): () => Promise<PruneStep>
}

export interface RetentionDeps {
  config: Pick<Config, 'responses' | 'batches'>
  log: Logger
  threads: ThreadStore
  batches: BatchStore
  containers?: ContainerGrants
}

export class Retention {
  private readonly jobs: Job[]
  private running?: Promise<void>
  private stopped = false
  private timers: ReturnType<typeof setTimeout>[] = []

  constructor(private readonly deps: RetentionDeps) {
    const { config, threads, batches, containers } = deps
    const jobs: Job[] = [
      { what: 'stored responses', days: config.responses.retentionDays, graceMs: PRUNE_GRACE_MS, pass: (before) => threads.pruner(before, RESPONSES_CHUNK) },
      { what: 'batch items', days: config.batches.retentionDays, graceMs: 0, pass: (before, now) => () => batches.pruneItemsSome(before, now, ITEMS_CHUNK) },
      ...(containers ? [{ what: 'expired container grants', days: 0, graceMs: 0, always: true, pass: (before: number) => () => containers.pruneSome(before, GRANTS_CHUNK) }] : []),
    ]
    this.jobs = jobs.filter((j) => j.always || j.days > 0)
  }

  /** One pass over every job (one at a time; a pass asked for while one runs is that one). */
  prune(now = Date.now()): Promise<void> {
    this.running ??= this.pass(now).finally(() => (this.running = undefined))
    return this.running
  }

  private async pass(now: number): Promise<void> {
    for (const job of this.jobs) {
      if (this.stopped) return
      const before = now - job.days * DAY_MS - job.graceMs
      try {
        const n = await pruneInSteps(job.pass(before, now), () => this.stopped)
        if (n > 0) this.deps.log.info(`retention: removed ${job.what}`, { rows: n, retention_days: job.days })
      } catch (e) {
        this.deps.log.error(`retention: removing ${job.what} failed`, { error: (e as Error).message })
      }
    }
  }

  /** A pass soon after start, then every `everyMs`; `onClose` stops them and waits for a pass under way. */
  start(onClose: (() => void | Promise<void>)[], everyMs = 3_600_000): this {
    if (this.jobs.length === 0) return this
    const first = setTimeout(() => void this.prune(), 1_000)
    const every = setInterval(() => void this.prune(), everyMs)
    first.unref?.()
    every.unref?.()
    this.timers = [first, every]
    onClose.push(() => this.stop())
    return this
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const t of this.timers) clearTimeout(t)
    await this.running
  }
}
