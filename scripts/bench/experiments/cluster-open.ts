// Experiment (docs/bench.md, cluster mode): the chat pass-through's latency at a steady rate,
// from the send, against one gateway at a time: embedded, cluster mode, and cluster
// mode with `redis.take_ahead: false` (every request waits for its Redis round trip). The
// gateway on core 1; the stores, the upstream and this driver on core 0, as in cluster.ts.
// Each setup in turn per round, so neighbouring phases share the machine's state. Prints each
// phase's p50 / p90 / p99, the gateway's CPU a request, Redis's script calls a request (its own
// count), and the requests the cluster gateway served from what it took ahead (its /metrics).
//   bun scripts/bench/experiments/cluster-open.ts [funded|unlimited] [rounds] [req/s|max] [setups]
// (max: a closed loop at 64 connections, wrk's when it is installed, instead of a steady rate)
// setups: a comma list of embedded, cluster, exact (default all three), and to take cluster mode
// apart: redis (SQLite, with limits and credits on Redis) and pg (PostgreSQL, limits in memory,
// credits in the database; pgwait: the same with `database.take_ahead: false`).
import { RedisClient } from 'bun'
import { chatCall, fundedKey, probe, send } from '../call.ts'
import { openStores } from '../cluster-stores.ts'
import { closedLoop } from '../closedloop.ts'
import { openLoop } from '../openloop.ts'
import { PASS_MODEL } from '../paths.ts'
import { cpuSeconds } from '../proc.ts'
import { pinSelf, spawnGateway, spawnUpstream } from '../processes.ts'

const [which = 'unlimited', rounds = '3', rate = '1000', setups = 'embedded,cluster,exact'] = process.argv.slice(2)
const ADMIN = 'bench-admin-' + crypto.randomUUID()
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
const OPEN_MS = 8_000

pinSelf(0)
const stores = await openStores(0)
const upstream = await spawnUpstream(0)
const redis = new RedisClient(stores.env.SWITCHYARD_REDIS_URL!)

/** Script calls Redis has run so far. */
async function scriptCalls(): Promise<number> {
  const info = String(await redis.send('INFO', ['commandstats']))
  let calls = 0
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(m[1])
  return calls
}

const pg = new Bun.SQL(stores.env.SWITCHYARD_DATABASE_URL!, { max: 1 })
/** Transactions the database has committed so far (its statistics lag by up to a second). */
async function commits(): Promise<number> {
  await Bun.sleep(1_500)
  const [row] = await pg`SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = current_database()`
  return Number(row.n)
}

/** The gateway's count of requests served from what it took ahead, by kind. */
async function takenAhead(url: string): Promise<string> {
  const text = await (await fetch(url + '/metrics', { headers: { authorization: 'Bearer ' + ADMIN } })).text()
  const kinds = [...text.matchAll(/^switchyard_redis_taken_ahead_total\{kind="(\w+)"\} (\d+)/gm)].map((m) => `${m[1]} ${m[2]}`)
  return kinds.length > 0 ? `taken ahead: ${kinds.join(', ')}` : ''
}

try {
  for (let round = 1; round <= Number(rounds); round++) {
    for (const setup of setups.split(',')) {
      const env: Record<string, string> = { SWITCHYARD_ADMIN_TOKEN: ADMIN }
      const { SWITCHYARD_DATABASE_URL, SWITCHYARD_REDIS_URL, SWITCHYARD_REDIS_PREFIX } = stores.env
      if (setup === 'cluster' || setup === 'exact') Object.assign(env, stores.env, { SWITCHYARD_REDIS_TAKE_AHEAD: String(setup === 'cluster') })
      else if (setup === 'redis') Object.assign(env, { SWITCHYARD_REDIS_URL, SWITCHYARD_REDIS_PREFIX })
      else if (setup === 'pg' || setup === 'pgwait') Object.assign(env, { SWITCHYARD_DATABASE_URL, SWITCHYARD_DATABASE_TAKE_AHEAD: String(setup === 'pg') })
      const onRedis = setup !== 'embedded' && setup !== 'pg' && setup !== 'pgwait'
      const gw = await spawnGateway({ core: 1, upstream: upstream.url, key: bootstrap, env })
      try {
        const key = which === 'funded' ? await fundedKey(gw.url, ADMIN) : bootstrap
        const call = chatCall('chat', `${gw.url}/api/alpha/v1`, key, PASS_MODEL)
        await probe(call)
        for (let i = 0; i < 500; i++) await (await send(call)).text()
        if (setup !== 'embedded') await stores.pin(gw.pid)
        const before = onRedis ? await takenAhead(gw.url) : ''
        const calls = await scriptCalls()
        const onPg = setup === 'pg' || setup === 'pgwait'
        const committed = onPg ? await commits() : 0
        const cpu = cpuSeconds(gw.pid)
        // the phase: what it reports of itself, and how many requests it sent
        const f = (n: number) => n.toFixed(2)
        const phase =
          rate === 'max'
            ? await closedLoop(call, { connections: 64, durationS: OPEN_MS / 1000, core: 0 }).then((c) => ({ sent: c.requests, said: `${c.rps.toFixed(0)} req/s at 64 connections, errors ${c.errors}` }))
            : await openLoop(call, Number(rate), OPEN_MS).then((o) => ({ sent: o.sent, said: `p50 ${f(o.latency.p50)} p90 ${f(o.latency.p90)} p99 ${f(o.latency.p99)} ms, ok ${o.ok}/${o.sent}` }))
        const cpuUs = ((cpuSeconds(gw.pid) - cpu) * 1e6) / phase.sent
        const perRequest = onRedis
          ? `, ${(((await scriptCalls()) - calls) / phase.sent).toFixed(2)} script calls`
          : onPg
            ? `, ${(((await commits()) - committed) / phase.sent).toFixed(2)} PostgreSQL commits`
            : ''
        console.log(`round ${round} ${setup.padEnd(8)} ${which}: ${phase.said}; a request: ${cpuUs.toFixed(1)} µs of gateway CPU${perRequest}${before ? `; before the phase ${before}, after ${await takenAhead(gw.url)}` : ''}`)
      } finally {
        await gw.stop()
      }
    }
  }
} finally {
  redis.close()
  await pg.close()
  await upstream.stop()
  await stores.close()
}
