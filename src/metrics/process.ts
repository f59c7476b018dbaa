// The process's own series, read at scrape time: resident memory, CPU seconds, start time, and
// how late the event loop runs a timer (the worst of the last few seconds), which is what every
// request on this thread waits behind; and the worker threads whose entry point loaded, by entry.
import type { Cell, Counter, Registry } from './registry.ts'
import { workersHeard } from '../lib/worker-url.ts'

const LAG_EVERY_MS = 500
/** Samples kept: the gauge is the worst of the last five seconds. */
const LAG_SAMPLES = 10

export class ProcessSeries {
  private readonly rss: Cell
  private readonly cpu: Cell
  private readonly lag: Cell
  private readonly workers: Counter
  private readonly lags = new Float64Array(LAG_SAMPLES)
  private next = 0
  private readonly timer: ReturnType<typeof setInterval>

  constructor(registry: Registry) {
    this.rss = registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes').cell()
    // the process's own running total, read at each scrape
    this.cpu = registry.counter('process_cpu_seconds', 'User and system CPU time spent in seconds').cell()
    registry.gauge('process_start_time_seconds', 'Start time of the process since the Unix epoch in seconds').set([], Math.round(Date.now() / 1000 - process.uptime()))
    this.lag = registry.gauge('switchyard_event_loop_lag_seconds', 'How late the event loop ran a timer, the worst of the last five seconds').cell()
    // an entry point missing here never appears: its work runs on this thread instead
    this.workers = registry.counter('switchyard_worker_threads_loaded', 'Worker threads started by this thread whose entry point loaded, by entry', ['entry'])
    let expected = performance.now() + LAG_EVERY_MS
    this.timer = setInterval(() => {
      const now = performance.now()
      this.lags[this.next++ % LAG_SAMPLES] = Math.max(0, now - expected) / 1000
      expected = now + LAG_EVERY_MS
    }, LAG_EVERY_MS)
    this.timer.unref?.()
  }

  collect(): void {
    this.rss.value = process.memoryUsage.rss()
    const { user, system } = process.cpuUsage()
    this.cpu.value = (user + system) / 1e6
    this.lag.value = Math.max(...this.lags)
    for (const [entry, n] of workersHeard()) this.workers.cell([entry]).value = n
  }

  close(): void {
    clearInterval(this.timer)
  }
}
