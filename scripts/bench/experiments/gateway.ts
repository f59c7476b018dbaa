// A gateway subprocess for an experiment: a temp data dir, limits out of the way, an admin
// token and a bootstrap key, the env given on top; resolves once it listens.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const ADMIN = 'admin-experiment-0123456789'
export const KEY = 'sk-sy-experiment-0123456789abcdef'

export interface ExperimentGateway {
  url: string
  pid: number
  /** The gateway's resident memory now, in bytes. */
  rss(): number
  /** A new key made through the admin API. */
  newKey(name: string): Promise<string>
  stop(): Promise<void>
}

export async function startExperimentGateway(name: string, env: Record<string, string | undefined> = {}): Promise<ExperimentGateway> {
  const dir = mkdtempSync(join(tmpdir(), `sy-${name}-`))
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, '../../../src/main.ts'), 'serve', '--port', '0', '--data-dir', dir], {
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SWITCHYARD_ADMIN_TOKEN: ADMIN, SWITCHYARD_BOOTSTRAP_KEY: KEY,
      SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_LOG_LEVEL: 'error',
      // profile the gateway, not the client: EXPERIMENT_BUN_OPTIONS="--cpu-prof --cpu-prof-dir=…"
      ...(process.env.EXPERIMENT_BUN_OPTIONS ? { BUN_OPTIONS: process.env.EXPERIMENT_BUN_OPTIONS } : {}),
      ...Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  let out = ''
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  while (!/listening on (http:\/\/\S+)/.test(out)) out += new TextDecoder().decode((await reader.read()).value)
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!
  return {
    url,
    pid: proc.pid,
    rss: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) * 1024,
    newKey: async (keyName) =>
      ((await (await fetch(`${url}/admin/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: keyName }) })).json()) as { key: string }).key,
    async stop() {
      proc.kill()
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
