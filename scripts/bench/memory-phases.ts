// The memory phases: the gateway's peak RSS (VmHWM) under a long closed-loop run and
// under thousands of streams abandoned after their first chunk. The peak is reset before each
// phase (clear_refs); when the kernel refuses, the phase runs on a fresh gateway process instead.
import type { Call } from './call.ts'
import { closedLoop } from './closedloop.ts'
import { disconnects } from './disconnects.ts'
import { memory, resetPeak } from './proc.ts'
import type { Child } from './processes.ts'
import type { MemoryPhase } from './results.ts'

export interface MemoryPlan {
  closedLoopS: number
  connections: number
  disconnects: number
  concurrency: number
  loadCore: number
}

export interface MemoryContext {
  gateway: Child
  /** A new gateway in place of the current one (which it stops): the fallback when VmHWM cannot be reset. */
  fresh(): Promise<Child>
  /** Chat pass-through, JSON, on a gateway at `url`. */
  chat(url: string): Call
  /** The pass-through streams of every surface, on a gateway at `url`. */
  streams(url: string): Call[]
  /** Every VmHWM read before a reset, so the run's overall peak survives the resets. */
  sawPeak(mib: number): void
  log(msg: string): void
  /** Reset a process's VmHWM; proc.ts's clear_refs write unless a test says otherwise. */
  reset?: (pid: number) => boolean
}

const sumErrors = (e: Record<string, number> | number) => (typeof e === 'number' ? e : Object.values(e).reduce((a, b) => a + b, 0))

export async function memoryPhases(ctx: MemoryContext, plan: MemoryPlan): Promise<{ phases: MemoryPhase[]; gateway: Child }> {
  let gw = ctx.gateway
  const phases: MemoryPhase[] = []

  /** Reset the peak (or start a fresh gateway), run the work, read the peak. */
  const phase = async (kind: MemoryPhase['kind'], label: string, work: (url: string) => Promise<{ done: number; errors: number; rps?: number }>) => {
    ctx.sawPeak(memory(gw.pid).hwmMiB)
    Bun.gc(true)
    let reset: MemoryPhase['reset'] = 'clear_refs'
    if (!(ctx.reset ?? resetPeak)(gw.pid)) {
      ctx.log('  could not reset VmHWM (clear_refs): a fresh gateway process for this phase')
      gw = await ctx.fresh()
      reset = 'fresh process'
    }
    const rssBeforeMiB = memory(gw.pid).rssMiB
    const t0 = performance.now()
    const r = await work(gw.url)
    const seconds = (performance.now() - t0) / 1000
    const m = memory(gw.pid)
    ctx.sawPeak(m.hwmMiB)
    phases.push({ kind, label, reset, seconds, done: r.done, errors: r.errors, rps: r.rps, rssBeforeMiB, rssAfterMiB: m.rssMiB, hwmMiB: m.hwmMiB })
    ctx.log(`  ${label}: peak RSS ${m.hwmMiB.toFixed(1)} MiB (RSS ${rssBeforeMiB.toFixed(1)} → ${m.rssMiB.toFixed(1)} MiB)`)
  }

  const cl = `closed loop ${plan.closedLoopS} s, ${plan.connections} connections, chat pass-through`
  ctx.log(`memory: ${cl}`)
  await phase('closed loop', cl, async (url) => {
    const r = await closedLoop(ctx.chat(url), { connections: plan.connections, durationS: plan.closedLoopS, core: plan.loadCore })
    return { done: r.requests, errors: r.errors, rps: r.rps }
  })

  const dl = `${plan.disconnects.toLocaleString('en-US')} stream disconnects, ${plan.concurrency} at a time, chat / messages / responses in turn`
  ctx.log(`memory: ${dl}`)
  await phase('disconnects', dl, async (url) => {
    const r = await disconnects(ctx.streams(url), plan.disconnects, plan.concurrency)
    if (sumErrors(r.errors) > 0) ctx.log(`  disconnect errors: ${JSON.stringify(r.errors)}`)
    return { done: r.aborted, errors: sumErrors(r.errors) }
  })

  return { phases, gateway: gw }
}
