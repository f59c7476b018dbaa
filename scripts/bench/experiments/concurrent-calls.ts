// Experiment: N concurrent upstream calls through the gateway, each held open by the upstream
// until all have arrived. With Bun's default fetch limit the upstream would see 256 at once and
// the rest would wait; the gateway raises the limit at start, so all N should arrive together.
// The client opens N raw sockets (this process's own fetch keeps Bun's default limit). Each
// stream costs the gateway two descriptors, so N is bounded by the open-files limit.
//   bun scripts/bench/experiments/concurrent-calls.ts [N=5000]
import { join } from 'node:path'
import { chatCall } from '../call.ts'
import { statusOnSocket } from '../lean-client.ts'
import { pinSelf, spawnGateway, spawnListening, ROOT } from '../processes.ts'

const N = Number(process.argv[2] ?? 5000)
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const up = await spawnListening(['taskset', '-c', '0', process.execPath, join(import.meta.dir, 'held-upstream.ts')], { env: { PATH: process.env.PATH ?? '' }, cwd: ROOT })
// SWITCHYARD_MAX_UPSTREAM_CONNECTIONS=256 in this process's environment shows the queue the gateway removes
const limit = process.env.SWITCHYARD_MAX_UPSTREAM_CONNECTIONS
const gw = await spawnGateway({ core: 1, upstream: up.url, key, logLevel: 'warn', env: { SWITCHYARD_IP_RPM: '10000000', SWITCHYARD_KEY_RPM: '10000000', ...(limit ? { SWITCHYARD_MAX_UPSTREAM_CONNECTIONS: limit } : {}) } })
const one = chatCall('chat', `${gw.url}/api/alpha/v1`, key, 'gpt-4o-mini')

const count = async () => (await (await fetch(`${up.url}/count`)).json()) as { open: number; peak: number }
const t0 = performance.now()
const replies: Promise<number>[] = []
for (let i = 0; i < N; i++) {
  replies.push(statusOnSocket(one))
  if (i % 500 === 499) await Bun.sleep(5)
}
let c = await count()
for (const until = Date.now() + 60_000; c.open < N && Date.now() < until; c = await count()) await Bun.sleep(100)
const allOpenMs = performance.now() - t0
await fetch(`${up.url}/release`, { method: 'POST' })
const statuses = await Promise.all(replies)
const ok = statuses.filter((s) => s === 200).length
console.log(`${N} calls: ${c.peak} open at the upstream at once (${allOpenMs.toFixed(0)} ms to open all); ${ok} answered 200`)
await gw.stop()
await up.stop()
process.exit(0)
