// Settings Bun reads only from the environment the process starts with; setting them from
// JavaScript later changes nothing. `serve` makes sure they hold (the table below): when one is
// missing or differs, the process replaces itself (execve: same pid, same arguments, same
// descriptors) with them added, before it opens anything. Where that cannot be done (no libc
// execve, Windows), it says so and goes on with Bun's defaults.
//
// - The fetch limit. Bun's fetch client opens at most 256 connections at once unless
//   BUN_CONFIG_MAX_HTTP_REQUESTS says otherwise. A gateway relaying thousands of open streams
//   would queue the 257th upstream call behind the first 256 (a 20-second stream holds its
//   connection for 20 seconds), so it holds `server.max_upstream_connections` (10,000 unless
//   configured).
// - The heap's warm-up thread, off. JavaScriptCore keeps a helper thread that makes heap blocks
//   resident before the allocator asks for them. A gateway's heap does not grow under steady load:
//   the thread kept faulting in blocks the allocator's scavenger had handed back, half the
//   process's page faults and 5-17 µs of CPU a request on the request thread's core. Without it
//   the request thread takes a quarter of those faults itself, and a request costs about 10 µs
//   less (docs/bench.md). Off unless the environment names it.
import { readFileSync } from 'node:fs'

export const FETCH_LIMIT_VAR = 'BUN_CONFIG_MAX_HTTP_REQUESTS'
/** What the gateway runs with unless told otherwise: thousands of long streams open at once. */
export const DEFAULT_FETCH_LIMIT = 10_000
/** Bun reads the variable as a 16-bit count. */
export const MAX_FETCH_LIMIT = 65_535

/** Start-only runtime settings `serve` runs with unless the environment names them already. */
const START_DEFAULTS: Readonly<Record<string, string>> = {
  BUN_JSC_useWarmUpMarkedBlocks: '0',
}

type Env = Record<string, string | undefined>

/** The variables this process must start with to run with `limit`, and the defaults it does not name. */
function startEnv(limit: number, env: Env = process.env): Record<string, string> {
  const wanted: Record<string, string> = { [FETCH_LIMIT_VAR]: String(limit) }
  for (const [k, v] of Object.entries(START_DEFAULTS)) wanted[k] = env[k] ?? v
  return wanted
}

/** True when this process already started with every variable of `wanted`. */
const startedWith = (wanted: Record<string, string>, env: Env): boolean => Object.entries(wanted).every(([k, v]) => env[k] === v)

/** The arguments this process was started with, as the kernel has them (a compiled binary's process.argv is not). */
function originalArgv(): string[] {
  if (process.platform === 'linux') {
    try {
      const raw = readFileSync('/proc/self/cmdline', 'latin1')
      const parts = raw.split('\0')
      if (parts.at(-1) === '') parts.pop()
      if (parts.length > 0) return parts.map((p) => Buffer.from(p, 'latin1').toString())
    } catch {}
  }
  return process.argv
}

/**
 * Re-executes this process with its start settings (the fetch limit `limit`, the defaults), unless
 * it started with them. Returns only when they are in force or cannot be set; `applied` says
 * whether the fetch limit is (the defaults only save CPU, so without them it goes on quietly).
 */
export async function ensureStartEnv(limit: number): Promise<{ applied: true } | { applied: false; reason: string }> {
  const wanted = startEnv(limit)
  if (startedWith(wanted, process.env)) return { applied: true }
  const notApplied = (why: string) => (process.env[FETCH_LIMIT_VAR] === String(limit) ? { applied: true as const } : { applied: false as const, reason: `${why}; set ${FETCH_LIMIT_VAR}=${limit} before starting` })
  if (process.platform !== 'linux' && process.platform !== 'darwin') return notApplied(`no execve on ${process.platform}`)
  try {
    const { dlopen, FFIType, ptr } = await import('bun:ffi')
    const libc = dlopen(process.platform === 'darwin' ? 'libc.dylib' : 'libc.so.6', {
      execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
      sigprocmask: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    })
    const keep: Buffer[] = []
    const cstr = (s: string) => {
      const b = Buffer.from(`${s}\0`)
      keep.push(b)
      return b
    }
    const list = (items: string[]) => {
      const a = new BigUint64Array(items.length + 1) // NULL-terminated
      items.forEach((s, i) => (a[i] = BigInt(ptr(cstr(s)))))
      return a
    }
    const env = Object.entries(process.env)
      .filter(([k, v]) => !Object.hasOwn(wanted, k) && v !== undefined)
      .map(([k, v]) => `${k}=${v}`)
    for (const [k, v] of Object.entries(wanted)) env.push(`${k}=${v}`)
    const argv = list(originalArgv())
    const envp = list(env)
    // The new image inherits this thread's signal mask: it starts with an empty one, as a
    // process started afresh does, whatever the runtime had blocked here.
    const empty = new Uint8Array(128)
    libc.symbols.sigprocmask(process.platform === 'darwin' ? 3 : 2 /* SIG_SETMASK */, ptr(empty), null)
    // only returns on failure
    libc.symbols.execve(ptr(cstr(process.execPath)), ptr(argv), ptr(envp))
    libc.close()
    return notApplied('execve failed')
  } catch (e) {
    return notApplied((e as Error).message)
  }
}

/** Bun's limit when the variable is absent. */
export const BUN_DEFAULT_FETCH_LIMIT = 256

/** The limit this process's fetch client runs with: the variable it started with, else Bun's default. */
export function fetchLimitInForce(env: Env = process.env): number {
  const n = Number(env[FETCH_LIMIT_VAR])
  return Number.isInteger(n) && n >= 1 && n <= MAX_FETCH_LIMIT ? n : BUN_DEFAULT_FETCH_LIMIT
}

/**
 * At start, before anything loads: a `serve` (the default command) gets its start settings, the
 * limit from `SWITCHYARD_MAX_UPSTREAM_CONNECTIONS`, else the one the environment names, else the
 * default. A failure here is left for `serve` to report.
 */
export async function earlyStartEnv(args: string[], env: Env = process.env): Promise<void> {
  // the command comes first; flags first mean serve (anything else re-executed is only slower)
  if (args[0] !== undefined && !args[0].startsWith('-') && args[0] !== 'serve') return
  const asked = Number(env.SWITCHYARD_MAX_UPSTREAM_CONNECTIONS ?? env[FETCH_LIMIT_VAR] ?? DEFAULT_FETCH_LIMIT)
  if (!Number.isInteger(asked) || asked < 1 || asked > MAX_FETCH_LIMIT) return
  await ensureStartEnv(asked)
}
