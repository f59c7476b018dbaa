// What the npm-fetched client scripts (ai-sdk.ts, agents-sdk.ts, langchain.ts) share: their
// packages installed into a cache dir outside the project (never into package.json), and the
// gateway started as `bun src/main.ts serve` on a free port, with a temp data dir, a config of
// its own, a known key, no upstream (the built-in mock answers) and its limits raised for the
// script's many calls.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dir, '..', '..')

/** `versions` installed into `cache` (at once when it already holds them). */
export async function install(cache: string, versions: string[]): Promise<void> {
  mkdirSync(cache, { recursive: true })
  const want = versions.join(' ')
  if ((await Bun.file(join(cache, 'installed.txt')).text().catch(() => '')) === want) return
  console.log(`installing ${want} into ${cache}`)
  if (!(await Bun.file(join(cache, 'package.json')).exists())) await Bun.write(join(cache, 'package.json'), '{"private":true}\n')
  const p = Bun.spawnSync(['npm', 'install', '--no-audit', '--no-fund', '--loglevel=error', ...versions], { cwd: cache, stdout: 'inherit', stderr: 'inherit' })
  if (p.exitCode !== 0) throw new Error('npm install failed')
  await Bun.write(join(cache, 'installed.txt'), want)
}

/** The gateway on the mock, for `key`; `tag` names its temp dir. */
export async function startGateway(key: string, tag: string): Promise<{ url: string; stop: () => void }> {
  const data = mkdtempSync(join(tmpdir(), `sy-${tag}-`))
  // a config of its own: none of the caller's directory applies
  await Bun.write(join(data, 'switchyard.yaml'), 'log_level: warn\n')
  const env: Record<string, string | undefined> = { ...process.env, SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_CONFIG: join(data, 'switchyard.yaml'),
    // many calls in a few seconds: past the default limits of one key
    SWITCHYARD_KEY_RPM: '100000', SWITCHYARD_KEY_BURST_RPS: '100000', SWITCHYARD_IP_RPM: '100000' }
  for (const k of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_AUTH_TOKEN', 'SWITCHYARD_CROSS_FAMILY']) delete env[k]
  const proc = Bun.spawn([process.execPath, 'src/main.ts', 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', join(data, 'data')], { cwd: root, env, stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let seen = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the gateway exited before listening:\n${seen}`)
    seen += new TextDecoder().decode(value)
    const url = /listening on (http:\/\/[0-9.:]+)/.exec(seen)?.[1]
    if (url) {
      void (async () => { while (!(await reader.read()).done); })()
      return { url, stop: () => { proc.kill(); rmSync(data, { recursive: true, force: true }) } }
    }
  }
}

/**
 * PASS/FAIL a line: `check` runs one, `done` stops the gateway, says how many failed and exits
 * with 1 when any did. A failure shows its message and, where the client gave them, the HTTP
 * status and the body it got.
 */
export function checks(gw: { stop: () => void }) {
  let failed = 0
  return {
    async check(name: string, f: () => Promise<string>): Promise<void> {
      try {
        console.log(`PASS ${name}: ${(await f()).slice(0, 120)}`)
      } catch (e) {
        failed++
        const err = e as { message?: string; status?: number; responseBody?: string }
        const status = typeof err.status === 'number' ? `${err.status} ` : ''
        console.log(`FAIL ${name}: ${status}${String(err.message ?? e).slice(0, 400)}${err.responseBody ? ` ${err.responseBody.slice(0, 300)}` : ''}`)
      }
    },
    done(): never {
      gw.stop()
      console.log(failed ? `${failed} failed` : 'all passed')
      process.exit(failed ? 1 : 0)
    },
  }
}
