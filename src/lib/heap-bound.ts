// A worker thread's garbage, collected once it passes a bound. JSC lets a heap grow well past
// what is alive before a full collection, and each thread's heap grows on its own: in the
// 50,000-item batch bench a batch worker with about 8 MiB alive held 50-70 MiB of heap (and
// 20 MiB more of its strings' memory), and the process's peak was the sum of every thread's.
// A look at the heap's size costs tens of µs; a collection of a heap this small, a few ms of
// CPU on a worker's own thread (a count the token worker is asked for meanwhile waits those
// few ms; no request's loop does). On the request thread a forced collection would stop its loop
// for the whole of it (the batch engine's loop-gap test saw 146 ms, 67 without, one run each):
// there the collection is only asked for (`beside`, Bun.gc(false)), and JSC marks beside the
// running code as in its own collections; the call returns in under a millisecond.

/** How often the heap's size is looked at. */
const CHECK_MS = 250

/** Garbage allowed beyond what the last collection left alive. */
export const HEAP_SLACK_BYTES = 8 * 1024 * 1024

/**
 * One look: collects when the heap has grown `slack` past what the last collection left, and
 * says whether it did. `heapUsed` and `collect` are this thread's unless given. A collection
 * that runs `beside` the thread's code has not ended when `collect` returns: what it left is
 * read at the next look.
 */
export function heapLook(slack: number, heapUsed = () => process.memoryUsage().heapUsed, collect = () => Bun.gc(true), beside = false): () => boolean {
  let floor = heapUsed()
  let asked = false
  return () => {
    const used = heapUsed()
    if (asked) {
      asked = false
      floor = used
      return false
    }
    if (used < floor + slack) return false
    collect()
    if (beside) asked = true
    else floor = heapUsed()
    return true
  }
}

/**
 * This thread's heap looked at every `everyMs`; the timer never keeps the thread alive. Returns
 * its stop. `beside`: the collection is asked for, not waited for (the request thread's).
 */
export function boundHeap(slack = HEAP_SLACK_BYTES, everyMs = CHECK_MS, beside = false): () => void {
  const look = beside ? heapLook(slack, undefined, () => Bun.gc(false), true) : heapLook(slack)
  const timer = setInterval(look, everyMs)
  timer.unref?.()
  return () => clearInterval(timer)
}
