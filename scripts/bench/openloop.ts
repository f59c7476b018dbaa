// Open-loop load: requests leave on a fixed schedule whether or not earlier ones have
// finished, so a server that falls behind shows it as queueing instead of quietly lowering the
// offered rate. Latency counts from the moment a request left; how late the driver sent it
// against the schedule (its timers count whole milliseconds) is kept apart as `dispatchLag`.
import { send, type Call } from './call.ts'
import { summarize, type Summary } from './stats.ts'

export interface OpenLoopResult {
  rate: number
  durationS: number
  sent: number
  ok: number
  /** Non-200 statuses, wrong bodies and transport errors, by kind. */
  errors: Record<string, number>
  latency: Summary
  /** How late the driver itself dispatched requests (timer slack on the load core). */
  dispatchLag: Summary
}

export async function openLoop(call: Call, rate: number, durationMs: number): Promise<OpenLoopResult> {
  const latencies: number[] = []
  const errors: Record<string, number> = {}
  const fail = (kind: string) => void (errors[kind] = (errors[kind] ?? 0) + 1)

  const lags = await paced(rate, durationMs, (sentAt) =>
    send(call, AbortSignal.timeout(15_000))
      .then(async (res) => {
        const text = await res.text()
        const done = performance.now()
        if (res.status !== 200) return fail(`HTTP ${res.status}`)
        if (!text.includes(call.expect)) return fail('unexpected body')
        latencies.push(done - sentAt)
      })
      .catch((e) => fail((e as Error).name || 'error')),
  )
  return {
    rate,
    durationS: durationMs / 1000,
    sent: lags.length,
    ok: latencies.length,
    errors,
    latency: summarize(latencies),
    dispatchLag: summarize(lags),
  }
}

/**
 * Call `fire(sentAt)` `rate` times a second for `durationMs`, never early, and wait for every
 * returned promise; `sentAt` is when the call left. Returns how late each call left (ms).
 *
 * The driver never spins. Bun's timers count whole milliseconds (`Bun.sleep` of less than one
 * returns at once), so a loop that slept the fraction of a millisecond left until the next send
 * spun: at 1,000 req/s it kept the load core 100 % busy, and the upstream and stores that share
 * that core (PostgreSQL, Redis) answered late for want of it. It sleeps whole milliseconds now
 * and sends what fell due meanwhile: up to a millisecond late, as `sentAt` and the lags say.
 */
export async function paced(rate: number, durationMs: number, fire: (sentAt: number) => Promise<void>): Promise<number[]> {
  const total = Math.round((rate * durationMs) / 1000)
  const interval = 1000 / rate
  const lags: number[] = []
  const inflight: Promise<void>[] = []
  // the driver's own garbage from the last phase should not pause this one
  Bun.gc(true)
  const start = performance.now() + 20
  let i = 0
  while (i < total) {
    const now = performance.now()
    while (i < total && start + i * interval <= now) {
      const sentAt = performance.now()
      lags.push(sentAt - (start + i++ * interval))
      inflight.push(fire(sentAt))
    }
    const wait = start + i * interval - performance.now()
    if (wait > 0) await Bun.sleep(Math.max(1, Math.floor(wait)))
  }
  await Promise.all(inflight)
  return lags
}
