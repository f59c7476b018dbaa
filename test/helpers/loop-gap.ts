// How long this thread's event loop went without running a 1 ms interval while `work` ran: what
// a request on the same thread would have waited (an in-process gateway's loop is the test's).
export async function worstGap(work: () => Promise<unknown>): Promise<number> {
  let worst = 0
  let last = performance.now()
  const t = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last - 1)
    last = now
  }, 1)
  try {
    await work()
  } finally {
    clearInterval(t)
  }
  return worst
}
