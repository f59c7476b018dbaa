// Experiment (docs/bench.md, per-request CPU): gateway trees in alternating rounds of a closed
// loop (64 connections) on chat or messages pass-through, the gateway pinned to core 1, with
// its CPU a request split by thread. The split is what found a token worker still loading its
// tables at nice 10 under load: its CPU looked like a cost of every request.
//   bun scripts/bench/experiments/cpu-ab.ts <tree>[,<tree>...] [chat|messages] [seconds] [rounds]
// A tree is a checkout's root ('.' for this one); each needs node_modules beside its src.
import { resolve } from 'node:path'
import { chatCall, messagesCall, probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { threadCpuSeconds } from '../proc.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream } from '../processes.ts'

const [treesArg, which = 'chat', secs = '8', rounds = '3'] = process.argv.slice(2)
if (!treesArg) throw new Error('usage: cpu-ab.ts <tree>[,<tree>...] [chat|messages] [seconds] [rounds]')
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const upstream = await spawnUpstream(0)

/** Thread names without their ids: the per-thread CPU summed by what the thread is. */
function byName(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [k, v] of Object.entries(after)) {
    const name = k.slice(k.indexOf(':') + 1)
    out[name] = (out[name] ?? 0) + v - (before[k] ?? 0)
  }
  return out
}

for (let round = 1; round <= Number(rounds); round++) {
  for (const root of trees) {
    const gw = await spawnGateway({ core: 1, upstream: upstream.url, key, root })
    const call = which === 'messages' ? messagesCall('m', gw.url + '/api/beta', key, 'claude-haiku-4-5') : chatCall('c', gw.url + '/api/alpha/v1', key, 'gpt-4o-mini')
    await probe(call)
    // warm: the JIT, and whatever the gateway still does after it starts listening
    await closedLoop(call, { connections: 16, durationS: 4, core: 0 })
    const t0 = threadCpuSeconds(gw.pid)
    const r = (await closedLoop(call, { connections: 64, durationS: Number(secs), core: 0 })) as { rps: number; ok?: number; requests?: number }
    const split = byName(t0, threadCpuSeconds(gw.pid))
    const n = r.ok ?? r.requests ?? 1
    const total = Object.values(split).reduce((a, b) => a + b, 0)
    const threads = Object.entries(split)
      .filter(([, v]) => v * 1e6 / n >= 1)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${((v * 1e6) / n).toFixed(0)}`)
    console.log(`round ${round} ${root === ROOT ? 'this tree' : root} ${which}: ${Math.round(r.rps)} req/s, ${((total * 1e6) / n).toFixed(0)} µs a request (${threads.join(', ')})`)
    await gw.stop()
  }
}
await upstream.stop()
