// The shared stores of the cluster bench, kept apart from everything else on the machine:
//   · Redis: a redis-server of the bench's own, pinned to the load core, when one is on PATH;
//     else the server at SWITCHYARD_BENCH_REDIS_URL (or SWITCHYARD_TEST_REDIS_URL) under a
//     key prefix of its own;
//   · PostgreSQL: a fresh schema of its own in SWITCHYARD_BENCH_DATABASE_URL (or
//     SWITCHYARD_TEST_DATABASE_URL), dropped at the end. The server is shared and not ours to
//     pin, so the backends that serve the gateway's connections are pinned to the load core
//     one by one (found by their client ports), before each measured phase;
//   · S3: a fresh bucket at SWITCHYARD_BENCH_S3_ENDPOINT (or SWITCHYARD_TEST_S3_ENDPOINT), when set.
import { SQL } from 'bun'
import { freePort } from '../../test/helpers/redis.ts'

export interface ClusterStores {
  /** The gateway's environment for cluster mode on these stores. */
  env: Record<string, string>
  /** What was used, for the report. */
  describe: string[]
  /** Pin the PostgreSQL backends serving `gatewayPid`'s connections to the load core; their pids. */
  pin(gatewayPid: number): Promise<number[]>
  /** The bench's own redis-server, when it runs one (metered with the load side). */
  redisPid?: number
  close(): Promise<void>
}

const env = (name: string) => process.env[`SWITCHYARD_BENCH_${name}`] || process.env[`SWITCHYARD_TEST_${name}`] || undefined

/** Why the cluster phase cannot run here; undefined when it can. */
export function storesMissing(): string | undefined {
  if (!env('DATABASE_URL')) return 'no PostgreSQL: set SWITCHYARD_BENCH_DATABASE_URL (or SWITCHYARD_TEST_DATABASE_URL) to a database whose role may create schemas'
  if (!env('REDIS_URL') && !Bun.which('redis-server')) return 'no Redis: put redis-server on PATH, or set SWITCHYARD_BENCH_REDIS_URL'
  return undefined
}

async function ownRedis(core: number): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort()
  const proc = Bun.spawn(['taskset', '-c', String(core), Bun.which('redis-server')!, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdout: 'ignore', stderr: 'ignore' })
  for (let i = 0; i < 100; i++) {
    const ok = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then((s) => (s.end(), true), () => false)
    if (ok) return { url: `redis://127.0.0.1:${port}`, pid: proc.pid, stop: async () => (proc.kill(), void (await proc.exited)) }
    await Bun.sleep(20)
  }
  proc.kill()
  throw new Error('redis-server did not start')
}

/** Local ports of `pid`'s TCP connections to `port` (from `ss`). */
function clientPorts(pid: number, port: number): number[] {
  const out = Bun.spawnSync(['ss', '-tnpH', 'state', 'established', `( dport = :${port} )`]).stdout.toString()
  const ports: number[] = []
  for (const line of out.split('\n')) {
    if (!line.includes(`pid=${pid},`)) continue
    const local = line.trim().split(/\s+/)[2] ?? ''
    ports.push(Number(local.slice(local.lastIndexOf(':') + 1)))
  }
  return ports
}

export async function openStores(loadCore: number): Promise<ClusterStores> {
  const dbUrl = env('DATABASE_URL')!
  const schema = `sy_bench_${crypto.randomUUID().slice(0, 8)}`
  const admin = new SQL({ url: dbUrl, max: 1 })
  await admin.unsafe(`CREATE SCHEMA ${schema}`)
  const u = new URL(dbUrl)
  u.searchParams.set('search_path', schema)
  const pgPort = Number(u.port || 5432)

  const given = env('REDIS_URL')
  const own = Bun.which('redis-server') ? await ownRedis(loadCore) : undefined
  const redisUrl = own?.url ?? given!
  const prefix = `sybench:${crypto.randomUUID().slice(0, 8)}:`

  const s3 = env('S3_ENDPOINT')
  const s3Env: Record<string, string> = {}
  if (s3) {
    const bucket = `sybench-${crypto.randomUUID().slice(0, 8)}`
    const res = await fetch(`${s3.replace(/\/+$/, '')}/${bucket}`, { method: 'PUT' })
    if (res.ok) Object.assign(s3Env, { S3_BUCKET: bucket, S3_ENDPOINT: s3, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' })
  }

  return {
    env: { SWITCHYARD_CLUSTER: 'true', SWITCHYARD_DATABASE_URL: u.toString(), SWITCHYARD_REDIS_URL: redisUrl, SWITCHYARD_REDIS_PREFIX: prefix, ...s3Env },
    describe: [
      `PostgreSQL ${u.host}, schema ${schema} of its own (the server shared; the gateway's backends pinned to core ${loadCore})`,
      own ? `Redis: a redis-server of its own pinned to core ${loadCore}` : `Redis ${new URL(redisUrl).host}, prefix ${prefix} (the server shared, not pinned)`,
      s3Env.S3_BUCKET ? `S3 ${s3}, bucket ${s3Env.S3_BUCKET} (the chat path writes nothing there)` : 'no S3 (SWITCHYARD_BENCH_S3_ENDPOINT unset): blobs on the data dir',
    ],
    async pin(gatewayPid) {
      const ports = clientPorts(gatewayPid, pgPort)
      if (ports.length === 0) return []
      const rows = (await admin.unsafe(`SELECT pid FROM pg_stat_activity WHERE client_port IN (${ports.join(',')})`)) as { pid: number }[]
      for (const r of rows) Bun.spawnSync(['taskset', '-cp', String(loadCore), String(r.pid)])
      return rows.map((r) => Number(r.pid))
    },
    redisPid: own?.pid,
    async close() {
      await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {})
      await admin.close()
      await own?.stop()
    },
  }
}
