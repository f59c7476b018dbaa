// Start the real gateway for a test: on a random port, a temp data dir, real SQLite (or a
// PostgreSQL database of its own when SWITCHYARD_TEST_DATABASE_URL is set: database.ts).
//   startGateway({ env, yaml })  → in this process (fast; most tests)
//   spawnGateway({ env, args })  → as a subprocess of `bun src/main.ts serve` (CLI,
//                                  signals, crash tests); `.kill(signal)` and `.exited`
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config/load.ts'
import { createLogger, type Logger } from '../../src/http/log.ts'
import { startServer, type Running, type ServerServices } from '../../src/server.ts'
import { databaseEnv, dropDatabaseFor } from './database.ts'
import { freshBucket } from './s3.ts'

export const ROOT = join(import.meta.dir, '..', '..')
export const BUN = process.execPath

export interface Gateway {
  url: string
  /** The bootstrap key (active, unlimited). */
  key: string
  dataDir: string
  services: ServerServices
  stop(): Promise<void>
}

export interface GatewayOptions {
  /** Environment as the gateway sees it (the test process's env is NOT inherited). */
  env?: Record<string, string | undefined>
  /** A config file's YAML text. */
  yaml?: string
  /** Reuse a data dir (a restart); otherwise a fresh temp dir, removed on stop. */
  dataDir?: string
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /** A logger of the test's own (to read what the gateway logs); otherwise one at `logLevel`. */
  log?: Logger
}

/**
 * SWITCHYARD_TEST_SHARED=1 runs every in-process gateway on the shared stores: Redis
 * (a key prefix of its own) and S3 (a bucket of its own), from the CI's test servers. They are
 * kept per data dir, as the database schema is (database.ts): gateways a test starts on one
 * data dir (a restart, or several instances) share them, as instances sharing a database must.
 */
const sharedByDir = new Map<string, Promise<Record<string, string>>>()

export const onSharedStores = process.env.SWITCHYARD_TEST_SHARED === '1'

function sharedStoresEnv(dataDir: string, own: GatewayOptions['env'] = {}): Promise<Record<string, string>> {
  // A test that hands its gateway a database of its own (scaleout/faults.test.ts: through a
  // proxy it cuts) has composed the stores under test itself; a Redis added to them would
  // change what it tests (credits held there need no database).
  if (!onSharedStores || own.SWITCHYARD_DATABASE_URL) return Promise.resolve({})
  let p = sharedByDir.get(dataDir)
  if (!p) sharedByDir.set(dataDir, (p = makeSharedStores()))
  return p
}

async function makeSharedStores(): Promise<Record<string, string>> {
  const env: Record<string, string> = {}
  if (process.env.SWITCHYARD_TEST_REDIS_URL) {
    env.REDIS_URL = process.env.SWITCHYARD_TEST_REDIS_URL
    env.SWITCHYARD_REDIS_PREFIX = `sytest:${crypto.randomUUID().slice(0, 8)}:`
  }
  if (process.env.SWITCHYARD_TEST_S3_ENDPOINT) Object.assign(env, (await freshBucket()).env)
  return env
}

export function tempDir(prefix = 'switchyard-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export async function startGateway(opts: GatewayOptions = {}): Promise<Gateway> {
  const dataDir = opts.dataDir ?? tempDir()
  const key = 'sk-sy-test-' + crypto.randomUUID().replaceAll('-', '')
  const flags: Record<string, string> = { port: '0', 'data-dir': dataDir }
  if (opts.yaml !== undefined) {
    const file = join(dataDir, 'switchyard.test.yaml')
    writeFileSync(file, opts.yaml)
    flags.config = file
  }
  const config = loadConfig({ flags, env: { SWITCHYARD_BOOTSTRAP_KEY: key, ...(await databaseEnv(dataDir)), ...(await sharedStoresEnv(dataDir, opts.env)), ...opts.env }, cwd: dataDir })
  const running: Running = await startServer(config, opts.log ?? createLogger(opts.logLevel ?? ((process.env.TEST_LOG_LEVEL as 'error') || 'silent')))
  return {
    url: running.url,
    key,
    dataDir,
    services: running.services,
    async stop() {
      await running.stop()
      if (!opts.dataDir) {
        rmSync(dataDir, { recursive: true, force: true })
        await dropDatabaseFor(dataDir)
        sharedByDir.delete(dataDir)
      }
    },
  }
}

export interface Spawned {
  url: string
  key?: string
  dataDir: string
  proc: ReturnType<typeof Bun.spawn>
  /** Everything the process printed on stdout so far. */
  output(): string
  /** Waits (up to `ms`) for stdout to contain `text`: log lines go out every 50 ms, not at once. */
  waitForOutput(text: string, ms?: number): Promise<string>
  kill(signal?: NodeJS.Signals | number): void
  exited: Promise<number>
}

/** Run the CLI (or a compiled binary via `cmd`) as a subprocess and wait for it to listen. */
export async function spawnGateway(opts: { env?: Record<string, string>; args?: string[]; dataDir?: string; cmd?: string[]; cwd?: string } = {}): Promise<Spawned> {
  const dataDir = opts.dataDir ?? tempDir()
  const cmd = opts.cmd ?? [BUN, join(ROOT, 'src/main.ts')]
  const proc = Bun.spawn([...cmd, 'serve', '--port', '0', '--data-dir', dataDir, ...(opts.args ?? [])], {
    cwd: opts.cwd ?? dataDir,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...(await databaseEnv(dataDir)), ...opts.env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  const dec = new TextDecoder()
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      out += dec.decode(value, { stream: true })
    }
  })()
  const deadline = Date.now() + 20_000
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      const err = await new Response(proc.stderr as ReadableStream).text().catch(() => '')
      proc.kill()
      throw new Error(`gateway did not start: ${out}\n${err}`)
    }
    await Bun.sleep(20)
  }
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!
  const key = /API key \(shown once[^)]*\): (\S+)/.exec(out)?.[1] ?? opts.env?.SWITCHYARD_BOOTSTRAP_KEY
  return {
    url,
    key,
    dataDir,
    proc,
    output: () => out,
    async waitForOutput(text, ms = 3000) {
      for (const until = Date.now() + ms; !out.includes(text) && Date.now() < until; ) await Bun.sleep(20)
      return out
    },
    kill: (signal = 'SIGTERM') => proc.kill(signal),
    exited: proc.exited.then(async (code) => {
      await pump.catch(() => {})
      return code
    }),
  }
}

/** Run a CLI command to completion. */
export async function runCli(args: string[], env: Record<string, string> = {}, cmd: string[] = [BUN, join(ROOT, 'src/main.ts')]) {
  // the data dir named on the command line or in the env selects the test database too
  const at = args.indexOf('--data-dir')
  const dir = at >= 0 ? args[at + 1] : env.SWITCHYARD_DATA_DIR
  const proc = Bun.spawn([...cmd, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...(dir ? await databaseEnv(dir) : {}), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout as ReadableStream).text(),
    new Response(proc.stderr as ReadableStream).text(),
    proc.exited,
  ])
  return { stdout, stderr, code }
}

export function cleanup(dir: string) {
  rmSync(dir, { recursive: true, force: true })
}
