// Experiment (docs/bench.md): system calls a request, the gateway against the bare proxy, on a
// surface's pass-through, counted by `strace -c -f` over a closed loop (16 connections). A
// count does not move with the machine's speed as CPU time does, so it compares on a noisy VM.
//   bun scripts/bench/experiments/syscalls.ts [chat|messages|responses] [seconds] [tree]
// RATE=1000: an open loop at that rate instead (requests one by one, as at a steady rate). Read
// its socket/connect counts with care: a traced process is slower, so more of its requests
// overlap and fetch opens upstream connections an untraced run does not: 0.57 connects a
// request traced, against about 0.03 untraced (the upstream connections left open at the end
// of a run of 1,000 requests, none closed; 2026-12-02).
import { resolve } from 'node:path'
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { openLoop } from '../openloop.ts'
import { candidatePaths } from '../paths.ts'
import { pinSelf, ROOT, spawnBareProxy, spawnGateway, spawnUpstream, type Child } from '../processes.ts'
import { perUnit, syscallsDuring } from './strace.ts'

const [which = 'chat', secs = '5', tree = '.'] = process.argv.slice(2)
const name = { chat: 'pass-through', messages: 'messages pass-through', responses: 'responses pass-through' }[which]!
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const up = await spawnUpstream(0)

async function counted(label: string, t: Child, bare: boolean) {
  const p = candidatePaths(t.url, up.url, key, t.url).find((x) => x.name === name)!
  const call = bare ? p.reference!.call : p.gateway
  await probe(call)
  const rate = Number(process.env.RATE ?? 0)
  const load = (s: number) => (rate > 0 ? openLoop(call, rate, s * 1000).then((r) => ({ requests: r.ok })) : closedLoop(call, { connections: 16, durationS: s, core: 0 }))
  await load(2)
  const { result: r, calls } = await syscallsDuring(t.pid, () => load(Number(secs)))
  console.log(`${label}: ${r.requests} requests, ${perUnit(calls, r.requests, 'request')}`)
}

const gw = await spawnGateway({ core: 1, upstream: up.url, key, root: tree === '.' ? ROOT : resolve(tree) })
await counted('gateway', gw, false)
await gw.stop()
const bare = await spawnBareProxy(1, up.url)
await counted('bare proxy', bare, true)
await bare.stop()
await up.stop()
process.exit(0)
