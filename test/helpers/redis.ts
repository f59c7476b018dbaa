// Redis for the scale-out tests. SWITCHYARD_TEST_REDIS_URL names a running server
// (CI starts one); suites that need it skip, saying so, when it is unset. Fault tests start
// a redis-server of their own on a random port, to stop and restart it mid-run.
import { createServer } from 'node:net'

export const TEST_REDIS_URL = process.env.SWITCHYARD_TEST_REDIS_URL || undefined

/** Why a Redis suite is skipped, printed once per file; undefined when it runs. */
export function redisSkipReason(): string | undefined {
  if (TEST_REDIS_URL) return undefined
  return 'SWITCHYARD_TEST_REDIS_URL is unset: the Redis scale-out tests are skipped (.ci/run sets it)'
}

/** A key prefix of its own per test, so that tests sharing one Redis never see each other's windows. */
export function freshPrefix(): string {
  return `sytest:${crypto.randomUUID().slice(0, 8)}:`
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/** A redis-server this test owns: `stop()` kills it (as a crash would), `start()` brings it back on the same port. */
export interface OwnRedis {
  url: string
  port: number
  /** The server's process id while it runs (a test may SIGSTOP it). */
  readonly pid: number | undefined
  start(): Promise<void>
  stop(): Promise<void>
}

/** `dir`: where it keeps a snapshot (`SAVE`), loaded again when it restarts; none by default. */
export async function ownRedis(opts: { dir?: string } = {}): Promise<OwnRedis> {
  const bin = Bun.which('redis-server')
  if (!bin) throw new Error('redis-server is not installed')
  const port = await freePort()
  let proc: ReturnType<typeof Bun.spawn> | undefined
  const r: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return proc?.pid
    },
    async start() {
      const args = [bin, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
      if (opts.dir) args.push('--dir', opts.dir)
      proc = Bun.spawn(args, { stdout: 'ignore', stderr: 'ignore' })
      for (let i = 0; i < 100; i++) {
        const ok = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then((s) => (s.end(), true), () => false)
        if (ok) return
        await Bun.sleep(20)
      }
      throw new Error('redis-server did not start')
    },
    async stop() {
      proc?.kill('SIGKILL')
      await proc?.exited
      proc = undefined
    },
  }
  await r.start()
  return r
}

/** How many keys on the test Redis match `pattern` (walked with SCAN, which blocks no one). */
export async function countKeys(pattern: string): Promise<number> {
  const client = new Bun.RedisClient(TEST_REDIS_URL!)
  try {
    let n = 0
    let cursor = '0'
    do {
      const [next, keys] = (await client.send('SCAN', [cursor, 'MATCH', pattern, 'COUNT', '1000'])) as [string, string[]]
      n += keys.length
      cursor = next
    } while (cursor !== '0')
    return n
  } finally {
    client.close()
  }
}
