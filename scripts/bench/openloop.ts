// Open-loop load: requests leave on a fixed schedule whether or not earlier ones have
// finished, and latency counts from the scheduled send time, so a server that falls
// behind shows it as queueing instead of quietly lowering the offered rate.
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

  const lags = await paced(rate, durationMs, (scheduled) =>
    send(call, AbortSignal.timeout(15_000))
      .then(async (res) => {
        const text = await res.text()
        const done = performance.now()
        if (res.status !== 200) return fail(`HTTP ${res.status}`)
        if (!text.includes(call.expect)) return fail('unexpected body')
        latencies.push(done - scheduled)
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
 * Call `fire(scheduledTime)` `rate` times a second for `durationMs`, never early, and wait
 * for every returned promise. Returns how late each call left (ms).
 */
export async function paced(rate: number, durationMs: number, fire: (scheduled: number) => Promise<void>): Promise<number[]> {
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
      const scheduled = start + i++ * interval
      lags.push(now - scheduled)
      inflight.push(fire(scheduled))
    }
    // Bun.sleep may wake a little early (whole ms); the loop above then simply waits again
    const wait = start + i * interval - performance.now()
    if (wait > 0) await Bun.sleep(wait)
  }
  await Promise.all(inflight)
  return lags
}
