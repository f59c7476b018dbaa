// How long an event loop is held while some work runs.
import { readFileSync } from 'node:fs'

/** This thread's CPU time in ms: what it ran, whatever else the machine ran meanwhile. */
function threadCpuMs(): number {
  const u = process.threadCpuUsage()
  return (u.user + u.system) / 1000
}

/**
 * How long this thread's event loop went without running a 1 ms interval while `work` ran: what
 * a request on the same thread would have waited (an in-process gateway's loop is the test's).
 * Each stretch counts the least of its wall time and the CPU time this thread spent in it: on a
 * machine whose cores other processes share (CI's two, a dozen gateways beside), a stretch of
 * 50 ms of work takes 300 ms of wall time, and that is the machine's doing, not the work's. The
 * holds these tests bound are the work's own CPU (encoding, parsing, building), which the
 * thread's clock counts whole however it was scheduled.
 */
export async function worstGap(work: () => Promise<unknown>): Promise<number> {
  let worst = 0
  let last = performance.now()
  let lastCpu = threadCpuMs()
  const t = setInterval(() => {
    const now = performance.now()
    const cpu = threadCpuMs()
    worst = Math.max(worst, Math.min(now - last, cpu - lastCpu) - 1)
    last = now
    lastCpu = cpu
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

/** CPU time, in ms, of the main thread of process `pid` (its task of the same id): 10 ms steps. */
function mainThreadCpuMs(pid: number): number {
  // the fields after the command's closing parenthesis: utime and stime are the 12th and 13th
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

/**
 * The slowest `/health` of a gateway in another process while `work` runs, asked every `everyMs`
 * from this one: how long that gateway's loop was held (its own loop is not this thread's).
 * Given the gateway's `pid` (Linux), each answer counts at most the CPU time the gateway's request
 * thread spent while it was awaited (plus one 10 ms step of that clock): on cores shared with
 * other suites, and with this process busy reading what `work` asked for, an answer waits on
 * more than the gateway, and the holds these tests bound are its thread's work.
 */
export async function slowestHealth(url: string, work: () => Promise<unknown>, everyMs = 2, pid?: number): Promise<number> {
  const cpu = pid !== undefined && process.platform === 'linux' ? () => mainThreadCpuMs(pid) : undefined
  let probing = true
  let worst = 0
  const probes = (async () => {
    while (probing) {
      const t0 = performance.now()
      const c0 = cpu?.()
      await (await fetch(`${url}/health`)).arrayBuffer()
      const wall = performance.now() - t0
      worst = Math.max(worst, cpu ? Math.min(wall, cpu() - c0! + 10) : wall)
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
