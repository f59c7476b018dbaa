// What Linux says about a process (CPU time, memory) and about the machine.
import { readFileSync } from 'node:fs'

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

/** Resident set now and its peak, in MiB. */
export function memory(pid: number): { rssMiB: number; hwmMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 }
}

/** CPU and wall time of a phase of work, measured on one process. */
export async function measured<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; cpuS: number; wallS: number }> {
  const cpu0 = cpuSeconds(pid)
  const t0 = performance.now()
  const result = await work()
  return { result, cpuS: cpuSeconds(pid) - cpu0, wallS: (performance.now() - t0) / 1000 }
}

export function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  const uname = Bun.spawnSync(['uname', '-sr']).stdout.toString().trim()
  return {
    nproc: navigator.hardwareConcurrency,
    cpuModel: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown',
    kernel: uname,
    bun: Bun.version,
  }
}
