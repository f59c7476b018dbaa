// Streamed requests at a fixed rate: time to the first body byte (from the send), and, for every text chunk, how long after the upstream sent it (its stamp) it
// reached the client. A gateway that buffers shows early chunks arriving late, all at
// once with the last; one that relays shows the same delays as the direct baseline.
import { send, type Call } from './call.ts'
import { paced } from './openloop.ts'
import { summarize, type Summary } from './stats.ts'
import { distinctStampsIn, epochMs, STREAM_CHUNKS } from './wire.ts'

export interface StreamResult {
  rate: number
  sent: number
  ok: number
  errors: Record<string, number>
  /** Scheduled send → first body bytes, ms. */
  ttfb: Summary
  /** Upstream send → client arrival, per text chunk, ms. */
  chunkDelay: Summary
  /** Per stream: arrival spread of its chunks ÷ their send spread (1 = as sent, 0 = bunched). */
  spread: Summary
}

interface OneStream {
  ttfb: number
  delays: number[]
  spread: number
}

async function oneStream(call: Call, leftAt: number): Promise<OneStream> {
  const res = await send(call, AbortSignal.timeout(15_000))
  if (res.status !== 200 || !res.body) throw new Error(`HTTP ${res.status}`)
  const reader = res.body.getReader()
  const dec = new TextDecoder()
  let text = ''
  let ttfb = NaN
  const sentAt: number[] = []
  const arrivedAt: number[] = []
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    const now = epochMs()
    if (Number.isNaN(ttfb)) ttfb = performance.now() - leftAt
    text += dec.decode(value, { stream: true })
    // a Responses stream repeats the text in its closing events: each chunk counts once
    const stamps = distinctStampsIn(text)
    for (let i = sentAt.length; i < stamps.length; i++) {
      sentAt.push(stamps[i]!)
      arrivedAt.push(now)
    }
  }
  if (!text.includes(call.expect) || sentAt.length !== STREAM_CHUNKS) throw new Error(`unexpected stream (${sentAt.length} stamped chunks)`)
  const sendSpread = sentAt.at(-1)! - sentAt[0]!
  return {
    ttfb,
    delays: sentAt.map((s, i) => arrivedAt[i]! - s),
    spread: sendSpread > 0 ? (arrivedAt.at(-1)! - arrivedAt[0]!) / sendSpread : 1,
  }
}

export async function streamLoad(call: Call, rate: number, durationMs: number): Promise<StreamResult> {
  const results: OneStream[] = []
  const errors: Record<string, number> = {}
  const lags = await paced(rate, durationMs, (leftAt) =>
    oneStream(call, leftAt).then(
      (r) => void results.push(r),
      (e) => void (errors[(e as Error).message] = (errors[(e as Error).message] ?? 0) + 1),
    ),
  )
  return {
    rate,
    sent: lags.length,
    ok: results.length,
    errors,
    ttfb: summarize(results.map((r) => r.ttfb)),
    chunkDelay: summarize(results.flatMap((r) => r.delays)),
    spread: summarize(results.map((r) => r.spread)),
  }
}
