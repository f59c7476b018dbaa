// Profile one path: the gateway pinned to core 1 with --cpu-prof, wrk on core 0 for N seconds,
// then the summary. `bun scripts/bench/prof.ts <chat|messages|responses|chat-claude|messages-gpt|responses-claude> [seconds] [rps]`
// (rps: open loop at that rate instead of a closed loop, to see the per-wake-up cost). ROOT=<checkout>
// profiles another tree (the budget's "before" column in docs/bench.md). PROF_CLUSTER=1: the
// gateway in cluster mode on the cluster bench's stores (cluster-stores.ts); PROF_FUNDED=1:
// through a key with credit, so every request holds and settles its cost. CONNECTIONS: the closed
// loop's connections (64).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chatCall, fundedKey, messagesCall, responsesCall, probe, type Call } from './call.ts'
import { closedLoop } from './closedloop.ts'
import { openLoop } from './openloop.ts'
import { metered, threadCpuSeconds } from './proc.ts'
import { openStores, type ClusterStores } from './cluster-stores.ts'
import { pinSelf, spawnGateway, spawnUpstream } from './processes.ts'

const [which = 'chat', secs = '8', rps] = process.argv.slice(2)
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
let key = bootstrap
const dir = mkdtempSync(join(tmpdir(), 'sy-prof-'))
pinSelf(0)
const upstream = await spawnUpstream(0)
const stores: ClusterStores | undefined = process.env.PROF_CLUSTER ? await openStores(0) : undefined
const admin = 'prof-admin-' + crypto.randomUUID()
const gw = await spawnGateway({ core: 1, upstream: upstream.url, key: bootstrap, profileDir: dir, root: process.env.ROOT, env: { SWITCHYARD_ADMIN_TOKEN: admin, ...stores?.env } })
if (process.env.PROF_FUNDED) {
  key = await fundedKey(gw.url, admin, 'prof funded')
}
const a = gw.url + '/api/alpha/v1'
const b = gw.url + '/api/beta'
const calls: Record<string, Call> = {
  chat: chatCall('c', a, key, 'gpt-4o-mini'),
  'chat-claude': chatCall('c', a, key, 'claude-haiku-4-5'),
  messages: messagesCall('m', b, key, 'claude-haiku-4-5'),
  'messages-gpt': messagesCall('m', b, key, 'gpt-4o-mini'),
  responses: responsesCall('r', a, key, 'gpt-4o-mini'),
  'responses-claude': responsesCall('r', a, key, 'claude-haiku-4-5'),
}
const call = calls[which]!
await probe(call)
await closedLoop(call, { connections: 16, durationS: 1, core: 0 })
await stores?.pin(gw.pid)
const threads0 = threadCpuSeconds(gw.pid)
const m = await metered({ gateway: gw.pid, others: [] }, async () => (rps ? openLoop(call, Number(rps), Number(secs) * 1000) : closedLoop(call, { connections: Number(process.env.CONNECTIONS ?? 64), durationS: Number(secs), core: 0 })) as any, () => 0)
const r: any = m.result
const threads1 = threadCpuSeconds(gw.pid)
const main = (t: Record<string, number>) => t[Object.keys(t).find((k) => k.startsWith(`${gw.pid}:`))!] ?? 0
const spent = Object.keys(threads1).reduce((a, k) => a + threads1[k]! - (threads0[k] ?? 0), 0)
const n = r.ok ?? r.requests
console.log(`${which}: ${n} requests, ${rps ? '' : (r.rps | 0) + ' req/s, '}gateway CPU ${(m.gatewayCpuS * 1000 / n).toFixed(3)} ms/req, request thread ${((main(threads1) - main(threads0)) / spent * 100).toFixed(0)} % of it`)
await gw.stop()
await upstream.stop()
await stores?.close()
console.log(dir)
