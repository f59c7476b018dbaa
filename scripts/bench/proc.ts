// What Linux says about a process (CPU time, memory) and about the machine.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'

let clkTck: number | undefined

/** Clock ticks per second for /proc/<pid>/stat times (getconf CLK_TCK, almost always 100). */
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    const r = Bun.spawnSync(['getconf', 'CLK_TCK'])
    clkTck = Number(r.stdout.toString().trim()) || 100
  }
  return clkTck
}

/** User + system CPU seconds of every thread of the process so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // the command name (field 2) may hold spaces; the fields after its ')' are fixed
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  return (utime + stime) / ticksPerSecond()
}

/** CPU seconds of these processes so far (a process gone counts nothing). */
export function cpuSecondsOf(pids: number[]): number {
  let sum = 0
  for (const pid of pids) {
    try {
      sum += cpuSeconds(pid)
    } catch {
      // gone meanwhile
    }
  }
  return sum
}

/** Resident set now and its peak, in MiB. */
export function memory(pid: number): { rssMiB: number; hwmMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 }
}

/**
 * Reset the process's peak RSS (VmHWM) to its current RSS, so the next reading is the peak of
 * what comes after: "5" to /proc/<pid>/clear_refs (Linux ≥ 4.0; allowed for our own children).
 * False when the kernel refuses; the caller then needs a fresh process for a clean peak.
 */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** Busy CPU seconds of the whole machine (all cores) so far, from /proc/stat. */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal: everything but idle and iowait
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) / ticksPerSecond()
}

const selfCpuSeconds = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

export interface Meter {
  /** Gateway CPU seconds during the phase. */
  gatewayCpuS: number
  wallS: number
  /** Cores' worth of CPU used by processes outside the bench (other work on the machine): noise. */
  otherCores: number
}

/**
 * Run a phase and meter it: the gateway's CPU, and the CPU the rest of the machine used
 * beyond the gateway, the bench's other processes, this driver and `loadCpuS` (wrk's own).
 */
export async function metered<T>(pids: { gateway: number; others: number[] }, work: () => Promise<T>, loadCpuS: (r: T) => number = () => 0): Promise<{ result: T } & Meter> {
  const othersCpu = () => pids.others.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
  const before = { busy: machineBusySeconds(), gw: cpuSeconds(pids.gateway), others: othersCpu(), self: selfCpuSeconds(), t: performance.now() }
  const result = await work()
  const wallS = (performance.now() - before.t) / 1000
  const gatewayCpuS = cpuSeconds(pids.gateway) - before.gw
  const ours = gatewayCpuS + (othersCpu() - before.others) + (selfCpuSeconds() - before.self) + loadCpuS(result)
  const other = machineBusySeconds() - before.busy - ours
  return { result, gatewayCpuS, wallS, otherCores: Math.max(0, other / wallS) }
}

export function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  const uname = Bun.spawnSync(['uname', '-sr']).stdout.toString().trim()
  return {
    nproc: cpus().length,
    cpuModel: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    kernel: uname,
    bun: Bun.version,
  }
}

/** CPU seconds of each thread of a process so far, by `tid:name`. */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out[`${tid}:${name}`] = (Number(f[11]) + Number(f[12])) / ticksPerSecond()
    } catch {
      // the thread ended
    }
  }
  return out
}

/** CPU seconds by thread name: a pool's threads (JIT workers, Bun's workers) summed. */
export function threadCpuByName(pid: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(threadCpuSeconds(pid))) {
    const name = k.slice(k.indexOf(':') + 1)
    out[name] = (out[name] ?? 0) + v
  }
  return out
}
