// How far a batch has got, for people: done (completed + failed) of total, the rate since it
// started and the time left at that rate. Pure; the dashboard and `switchyard batches watch`
// both show it.
import { FINAL, type BatchRow } from './types.ts'

export interface Progress {
  total: number
  completed: number
  failed: number
  /** completed + failed */
  done: number
  /** 0..1 */
  fraction: number
  /** Items per second since the batch started running; null before it ran. */
  itemsPerSecond: number | null
  /** Seconds left at that rate; 0 once it ended, null when unknown. */
  etaSeconds: number | null
  /** Nothing more will change (every result and the output files are written). */
  ended: boolean
}

export function progressOf(b: Pick<BatchRow, 'total' | 'succeeded' | 'failed' | 'status' | 'inProgressAt' | 'endedAt'>, now: number): Progress {
  const done = b.succeeded + b.failed
  const fraction = b.total > 0 ? Math.min(1, done / b.total) : FINAL.has(b.status) ? 1 : 0
  const until = b.endedAt ?? now
  const seconds = b.inProgressAt === null ? 0 : (until - b.inProgressAt) / 1000
  const itemsPerSecond = seconds > 0 && done > 0 ? done / seconds : null
  const ended = b.endedAt !== null
  const left = Math.max(0, b.total - done)
  const etaSeconds = ended || left === 0 ? 0 : itemsPerSecond ? left / itemsPerSecond : null
  return { total: b.total, completed: b.succeeded, failed: b.failed, done, fraction, itemsPerSecond, etaSeconds, ended }
}

/** `12m 5s`, `1h 2m`, `3s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
}
