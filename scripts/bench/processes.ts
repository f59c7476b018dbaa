// The subprocesses of a run, each pinned to its core: the fake upstream, the gateway
// (`bun src/main.ts serve`) pointed at it, and the bare Elysia proxy.
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { cpuSeconds } from './proc.ts'

export const ROOT = join(import.meta.dir, '..', '..')

export interface Child {
  url: string
  pid: number
  stop(): Promise<void>
  /** Lines the child has written to stdout so far (the gateway's access log: proof it was on). */
  outputLines?(): number
}

/** Newlines in a chunk: counting costs a byte scan, far less than the read itself. */
function newlines(b: Uint8Array): number {
  let n = 0
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++
  return n
}

/**
 * Spawn, then wait for the `listening on <url>` line on stdout, and keep draining it: the
 * gateway writes an access-log line per request (the targets hold with logging on),
 * and a pipe nobody reads would stall it. The drain only reads and drops (measured: about 2-4 %
 * of the load core at 10,000-20,000 lines a second; reads batch up as the rate grows).
 */
export async function spawnListening(cmd: string[], opts: { env: Record<string, string>; cwd: string; onStop?: () => void; stderrTo?: string }): Promise<Child> {
  const proc = Bun.spawn(cmd, { cwd: opts.cwd, env: opts.env, stdout: 'pipe', stderr: opts.stderrTo ? Bun.file(opts.stderrTo) : 'inherit' })
  let out = ''
  let lines = 0
  const dec = new TextDecoder()
  const reader = proc.stdout.getReader()
  const found = (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return undefined
      lines += newlines(value)
      out += dec.decode(value, { stream: true })
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        // drain the rest so a chatty child never blocks on a full pipe
        void (async () => {
          for (;;) {
            const r = await reader.read()
            if (r.done) return
            lines += newlines(r.value)
          }
        })().catch(() => {})
        return m[1]!
      }
    }
  })()
  const timeout = Bun.sleep(20_000).then(() => undefined)
  const url = await Promise.race([found, timeout, proc.exited.then(() => undefined)])
  if (!url) {
    proc.kill()
    throw new Error(`${cmd.join(' ')} did not start:\n${out}`)
  }
  return {
    url,
    pid: proc.pid,
    outputLines: () => lines,
    async stop() {
      proc.kill('SIGTERM')
      const exited = await Promise.race([proc.exited, Bun.sleep(5000).then(() => null)])
      if (exited === null) proc.kill('SIGKILL')
      opts.onStop?.()
    },
  }
}

const pinned = (core: number, cmd: string[]) => ['taskset', '-c', String(core), ...cmd]

/** Runtime settings written as `VAR=value VAR2=value` (the experiments' command lines) as an environment. */
export function settingsEnv(settings: string): Record<string, string> {
  return Object.fromEntries(settings.split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
}

export function spawnUpstream(core: number, env: Record<string, string> = {}): Promise<Child> {
  return spawnListening(pinned(core, [process.execPath, join(import.meta.dir, 'upstream.ts')]), { env: { PATH: process.env.PATH ?? '', ...env }, cwd: ROOT })
}

/** The bare Elysia proxy of bare-proxy.ts, pinned like the gateway. */
export function spawnBareProxy(core: number, upstream: string, env: Record<string, string> = {}): Promise<Child> {
  return spawnListening(pinned(core, [process.execPath, join(import.meta.dir, 'bare-proxy.ts')]), { env: { PATH: process.env.PATH ?? '', UPSTREAM: upstream, ...env }, cwd: ROOT })
}

export interface GatewayOptions {
  /** The core to pin the gateway to; null: not pinned (the batch bench: its workers use every core). */
  core: number | null
  upstream: string
  key: string
  /** Write a CPU profile (.cpuprofile and .md) of the gateway into this directory on exit. */
  profileDir?: string
  /** Another checkout to run (an experiment against a copy of the tree); default this one. */
  root?: string
  /** Extra environment for the gateway (experiments). */
  env?: Record<string, string>
  /** `info` (default) keeps the per-request access log on, as the targets require; `warn` turns it off. */
  logLevel?: 'debug' | 'info' | 'warn' | 'error'
  /** A file for the gateway's stderr (the collector's log, for the allocation counts); default this process's. */
  stderrTo?: string
}

// Far above anything the bench sends in a minute, so limits are checked but never bind.
// The limiter keeps an exact log of `limit` timestamps per bucket, so these cost memory
// (8 bytes × limit per bucket) that shows in the RSS figures.
const LIMITS = { SWITCHYARD_KEY_RPM: '1500000', SWITCHYARD_IP_RPM: '1500000', SWITCHYARD_KEY_BURST_RPS: '100000' }

export async function spawnGateway(o: GatewayOptions): Promise<Child> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'))
  const profile = o.profileDir ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${o.profileDir}`] : []
  const serve = [process.execPath, ...profile, join(o.root ?? ROOT, 'src/main.ts'), 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', o.logLevel ?? 'info']
  // not pinned: every core, whatever this (pinned) process's affinity would pass on
  const cmd = o.core === null ? ['taskset', '-c', `0-${cpus().length - 1}`, ...serve] : pinned(o.core, serve)
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    OPENAI_API_KEY: 'sk-bench-upstream',
    OPENAI_BASE_URL: o.upstream + '/v1',
    ANTHROPIC_API_KEY: 'sk-ant-bench-upstream',
    ANTHROPIC_BASE_URL: o.upstream,
    SWITCHYARD_BOOTSTRAP_KEY: o.key,
    ...LIMITS,
    ...o.env,
  }
  const child = await spawnListening(cmd, { env, cwd: dataDir, stderrTo: o.stderrTo, onStop: () => rmSync(dataDir, { recursive: true, force: true }) })
  await settled(child.pid)
  return child
}

/**
 * Waits (up to 10 s) until a process just started has done its start-up work: a 200 ms
 * interval in which it used under 5 % of a core. The gateway loads its token tables in a
 * worker at nice 10 as it starts: on an idle core about a second of CPU on this VM, but under
 * load from the first moment it gets a tenth of the core and takes tens of seconds, and a
 * measured window would charge that one-time cost to every request in it (13 µs a request
 * in an 8 s closed loop).
 */
async function settled(pid: number): Promise<void> {
  const until = performance.now() + 10_000
  let last = cpuSeconds(pid)
  while (performance.now() < until) {
    await Bun.sleep(200)
    const now = cpuSeconds(pid)
    if (now - last < 0.02) return
    last = now
  }
}

/** Pin this process (every thread, `-a`) to a core, so the load side stays off the gateway's. */
export function pinSelf(core: number): boolean {
  return Bun.spawnSync(['taskset', '-a', '-cp', String(core), String(process.pid)]).exitCode === 0
}
