// PostgreSQL and Redis: requests served while the database is cut off (their records wait in
// memory and in the data dir's spool), then kill -9. Prints the key's spent in the database, its
// records, and Redis's running spent: right after the kill, Redis counts the costs of the
// requests whose records are only in the spool; the next start on the data dir writes them
// (docs/scale-out.md).
// Usage: SWITCHYARD_TEST_DATABASE_URL=… SWITCHYARD_TEST_REDIS_URL=… bun scripts/soak/redis-spend-after-kill.ts
import { SQL, RedisClient } from 'bun'
import { names } from '../../src/db/columns.ts'
import { apiKeys, generations } from '../../src/db/schema.ts'
import { fixture, startFakeUpstream, upstreamEnv } from '../../test/helpers/fake-upstream.ts'
import { spawnGateway, tempDir } from '../../test/helpers/server.ts'
import { databaseEnv, dropDatabaseFor } from '../../test/helpers/database.ts'
import { startTcpProxy } from '../../test/helpers/tcp-proxy.ts'
const up = await startFakeUpstream()
let c = 0
up.script(() => ({ json: fixture('openai/chat/nonstream-text.json').replaceAll('chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU', 'chatcmpl-p' + ++c) }))
const dataDir = tempDir('probe-redis-')
const dbUrl = (await databaseEnv(dataDir)).SWITCHYARD_DATABASE_URL
if (!dbUrl || !process.env.SWITCHYARD_TEST_REDIS_URL) throw new Error("set SWITCHYARD_TEST_DATABASE_URL and SWITCHYARD_TEST_REDIS_URL")
const u = new URL(dbUrl)
const proxy = startTcpProxy(u.hostname, Number(u.port || 5432))
const viaProxy = new URL(dbUrl); viaProxy.host = `127.0.0.1:${proxy.port}`
const prefix = `probe:${crypto.randomUUID().slice(0, 8)}:`
const env = { ...upstreamEnv(up), SWITCHYARD_DATABASE_URL: viaProxy.toString(), REDIS_URL: process.env.SWITCHYARD_TEST_REDIS_URL!, SWITCHYARD_REDIS_PREFIX: prefix, SWITCHYARD_ADMIN_TOKEN: 'adm' }
const gw = await spawnGateway({ env, dataDir })
const made = (await (await fetch(`${gw.url}/admin/v1/keys`, { method: 'POST', headers: { authorization: 'Bearer adm', 'content-type': 'application/json' }, body: JSON.stringify({ name: 'p', credits: 1 }) })).json()) as any
const ask = (url: string) => fetch(`${url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${made.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }) }).then(async (r) => [r.status, (await r.text()).slice(0, 80)])
console.log('first', await ask(gw.url))
await Bun.sleep(300)
proxy.cut()
const st: unknown[] = []
for (let i = 0; i < 10; i++) st.push((await ask(gw.url))[0])
console.log('while cut', st.join(','))
await Bun.sleep(200)
gw.kill('SIGKILL'); await gw.exited
proxy.restore()
const sql = new SQL({ url: dbUrl, max: 1 })
const [k] = await sql.unsafe(`SELECT spent FROM ${names(apiKeys).$table} WHERE id = '${made.id}'`)
const [g] = await sql.unsafe(`SELECT COUNT(*) AS n, COALESCE(SUM(cost),0) AS c FROM ${names(generations).$table} WHERE api_key_id = '${made.id}'`)
const redis = new RedisClient(process.env.SWITCHYARD_TEST_REDIS_URL!)
const rspent = await redis.hget(`${prefix}cr:{${made.id}}`, 'spent')
console.log(JSON.stringify({ dbSpent: Number(k.spent), records: Number(g.n), recordsCost: Number(g.c), redisSpent: Number(rspent) }))
await sql.close(); redis.close(); proxy.stop(); await up.stop()
await dropDatabaseFor(dataDir)
process.exit(0)
