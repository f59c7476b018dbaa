// The system calls a process makes while `work` runs, by name (`strace -c -f`, every thread),
// for the experiments that divide them by requests or chunks.
export async function syscallsDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; calls: Map<string, number> }> {
  const out = `/tmp/strace-${pid}-${process.pid}.txt`
  const st = Bun.spawn(['strace', '-c', '-f', '-o', out, '-p', String(pid)], { stderr: 'ignore', stdout: 'ignore' })
  await Bun.sleep(300) // attached to every thread
  const result = await work()
  st.kill('SIGINT')
  await st.exited
  const calls = new Map<string, number>()
  for (const line of (await Bun.file(out).text()).split('\n')) {
    const f = line.trim().split(/\s+/)
    // "% time  seconds  usecs/call  calls  [errors]  syscall"; the total line is left out
    if (f.length < 5 || !/^[\d.]+$/.test(f[0]!) || f[f.length - 1] === 'total') continue
    calls.set(f[f.length - 1]!, Number(f[3]))
  }
  return { result, calls }
}

/** "N system calls a <unit>: name n, …" for the calls made at least `min` times a unit. */
export function perUnit(calls: Map<string, number>, units: number, unit: string, min = 0.05): string {
  const n = Math.max(1, units)
  const total = [...calls.values()].reduce((a, c) => a + c, 0)
  const named = [...calls].filter(([, c]) => c / n >= min).sort((a, b) => b[1] - a[1])
  return `${(total / n).toFixed(2)} system calls a ${unit}: ${named.map(([k, c]) => `${k} ${(c / n).toFixed(2)}`).join(', ')}`
}
