// Background threads yield the CPU to the request thread: on a machine whose cores are all
// busy, the thread that answers requests should be the one that runs.
import { readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'

/**
 * The calling thread (and the helper threads it starts afterwards) runs at nice 10. Linux
 * names a thread by /proc/thread-self and keeps a niceness per thread; elsewhere, or without
 * the right, the thread keeps the process's priority.
 */
export function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.max(getPriority(tid), 10))
  } catch {}
}
