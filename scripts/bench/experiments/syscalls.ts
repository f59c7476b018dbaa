// Experiment (docs/bench.md): system calls a request, the gateway against the bare proxy, on a
// surface's pass-through, counted by `strace -c -f` over a closed loop (16 connections). A
// count does not move with the machine's speed as CPU time does, so it compares on a noisy VM.
//   bun scripts/bench/experiments/syscalls.ts [chat|messages|responses] [seconds] [tree]
import { resolve } from 'node:path'
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
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
  await closedLoop(call, { connections: 16, durationS: 2, core: 0 })
  const { result: r, calls } = await syscallsDuring(t.pid, () => closedLoop(call, { connections: 16, durationS: Number(secs), core: 0 }))
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
