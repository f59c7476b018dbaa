// Closed-loop maximum throughput: a fixed number of connections, each sending its next
// request as soon as the last one is answered. `wrk` when installed (C, one thread, so the
// load side stays cheap); otherwise a Bun driver, which costs more per request on the
// load core and so may under-report what the gateway can do.
import { join } from 'node:path'
import { send, type Call } from './call.ts'

export interface ClosedLoopResult {
  tool: 'wrk' | 'bun'
  connections: number
  durationS: number
  requests: number
  rps: number
  /** Non-2xx answers and socket errors (any makes the figure suspect). */
  errors: number
  /** CPU seconds the load tool itself used (wrk is a separate process). */
  loadCpuS: number
  detail?: string
}

export const wrkPath = () => Bun.which('wrk')

export const WRK_MISSING = 'wrk is not installed: `apt-get install -y wrk` (Debian/Ubuntu); falling back to a closed-loop Bun driver, which is slower on the load side'

/** wrk's summary lines → numbers. */
export function parseWrk(out: string): { requests: number; rps: number; errors: number } {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0
  return {
    requests: num(/(\d+) requests in/),
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    errors: num(/Non-2xx or 3xx responses: (\d+)/) + socketErrors,
  }
}

export async function runWrk(call: Call, opts: { connections: number; durationS: number; core: number }): Promise<ClosedLoopResult> {
  const headers = Object.entries(call.headers).map(([k, v]) => `${k}: ${v}`).join('\n')
  const proc = Bun.spawn(
    ['taskset', '-c', String(opts.core), wrkPath()!, '-t1', `-c${opts.connections}`, `-d${opts.durationS}s`, '-s', join(import.meta.dir, 'post.lua'), call.url],
    { env: { ...process.env, BENCH_METHOD: call.method, BENCH_BODY: call.body ?? '', BENCH_HEADERS: headers }, stdout: 'pipe', stderr: 'pipe' },
  )
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`wrk failed (${code}): ${err || out}`)
  const r = parseWrk(out)
  const loadCpuS = Number(proc.resourceUsage()?.cpuTime.total ?? 0) / 1e6
  return { tool: 'wrk', connections: opts.connections, durationS: opts.durationS, ...r, loadCpuS, detail: r.requests === 0 ? out : undefined }
}

export async function runBunLoop(call: Call, opts: { connections: number; durationS: number }): Promise<ClosedLoopResult> {
  let requests = 0
  let errors = 0
  const start = performance.now()
  const deadline = start + opts.durationS * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      try {
        const res = await send(call)
        const text = await res.text()
        if (res.status === 200 && text.includes(call.expect)) requests++
        else errors++
      } catch {
        errors++
      }
    }
  }
  await Promise.all(Array.from({ length: opts.connections }, worker))
  const elapsed = (performance.now() - start) / 1000
  return { tool: 'bun', connections: opts.connections, durationS: opts.durationS, requests, rps: requests / elapsed, errors, loadCpuS: 0 }
}

export function closedLoop(call: Call, opts: { connections: number; durationS: number; core: number }): Promise<ClosedLoopResult> {
  return wrkPath() ? runWrk(call, opts) : runBunLoop(call, opts)
}
