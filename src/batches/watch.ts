// `switchyard batches watch ID`: a batch's progress in the terminal, read from the data dir a
// running server writes (like `keys`), until the batch has ended. On a terminal one line is
// redrawn in place; into a pipe or a file a line is printed when the figures change, at most
// every few seconds. The exit status says how it ended: 0 completed or cancelled, 1 failed or
// expired.
import type { Storage } from '../db/client.ts'
import { formatDuration, progressOf, type Progress } from './progress.ts'
import { BatchStore } from './store.ts'
import type { BatchRow } from './types.ts'

export interface WatchOptions {
  storage: Storage
  id: string
  write: (text: string) => void
  tty: boolean
  /** How often the row is read (ms). */
  intervalMs?: number
  /** Into a pipe, the least time between two lines (ms). */
  lineEveryMs?: number
}

const WIDTH = 30
const EXIT: Record<BatchRow['status'], number> = { completed: 0, cancelled: 0, failed: 1, expired: 1, queued: 1, processing: 1 }

export function bar(p: Progress): string {
  const full = Math.round(p.fraction * WIDTH)
  return '[' + '#'.repeat(full) + '.'.repeat(WIDTH - full) + ']'
}

export function progressLine(b: BatchRow, p: Progress): string {
  const pct = `${Math.floor(p.fraction * 100)}%`.padStart(4)
  const rate = p.itemsPerSecond === null ? '' : `  ${p.itemsPerSecond.toFixed(1)} items/s`
  const eta = p.ended ? '' : p.etaSeconds === null ? '' : `  ETA ${formatDuration(p.etaSeconds)}`
  return `${bar(p)} ${pct}  ${p.done}/${p.total} (${p.failed} failed)${rate}${eta}  ${b.status}`
}

/** Returns the exit status, or a message when there is no such batch. */
export async function watchBatch(o: WatchOptions): Promise<number | string> {
  const store = new BatchStore(o.storage)
  const every = o.intervalMs ?? 500
  const lineEvery = o.lineEveryMs ?? 5_000
  let shown = ''
  let shownAt = 0
  for (;;) {
    const b = await store.byId(o.id)
    if (!b) return `no batch with id ${o.id}`
    const p = progressOf(b, Date.now())
    const line = progressLine(b, p)
    const figures = `${p.done} ${b.status}`
    if (o.tty) o.write(`\r${line}\x1b[K`)
    else if (p.ended || (figures !== shown && Date.now() - shownAt >= lineEvery)) {
      o.write(line + '\n')
      shown = figures
      shownAt = Date.now()
    }
    if (p.ended) {
      if (o.tty) o.write('\n')
      const errors = b.errors ? (JSON.parse(b.errors) as { message?: string }[]).map((e) => e.message).filter(Boolean) : []
      o.write(`batch ${b.id} ${b.status}: ${b.succeeded} completed, ${b.failed} failed of ${b.total}${errors.length ? ` (${errors.join('; ')})` : ''}\n`)
      return EXIT[b.status]
    }
    await Bun.sleep(every)
  }
}
