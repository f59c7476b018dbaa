// How long an event loop is held while some work runs.

/**
 * How long this thread's event loop went without running a 1 ms interval while `work` ran: what
 * a request on the same thread would have waited (an in-process gateway's loop is the test's).
 */
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

/**
 * The least of `tries` measures of worstGap over `work`: on a loaded machine (other suites'
 * gateways beside) any one try may be held by the others as long as the work once held it, but
 * none less than the work's own longest stretch, which is what the tests bound.
 */
export async function leastGap(work: () => Promise<unknown>, tries = 3): Promise<number> {
  let least = Infinity
  for (let i = 0; i < tries; i++) least = Math.min(least, await worstGap(work))
  return least
}

/**
 * The slowest `/health` of a gateway in another process while `work` runs, asked every `everyMs`
 * from this one: how long that gateway's loop was held (its own loop is not this thread's).
 */
export async function slowestHealth(url: string, work: () => Promise<unknown>, everyMs = 2): Promise<number> {
  let probing = true
  let worst = 0
  const probes = (async () => {
    while (probing) {
      const t0 = performance.now()
      await (await fetch(`${url}/health`)).arrayBuffer()
      worst = Math.max(worst, performance.now() - t0)
      await Bun.sleep(everyMs)
    }
  })()
  try {
    await work()
  } finally {
    probing = false
    await probes
  }
  return worst
}
