// Experiment (docs/bench.md): what random upstream ids cost the gateway. Real
// upstreams hand out random ids (chatcmpl-…, msg_…), the gateway indexes its records by
// them, and a random key dirties a page of that index a record, where the bench's sequential
// ids fill one page after another. Two fake upstreams, sequential and random ids (BENCH_IDS),
// each with its own gateway on core 1; 64-connection closed loops, alternating, while the
// record tables grow.
//   bun scripts/bench/experiments/ids.ts [chat|messages] [rounds]
import { probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { surfaceCall } from '../paths.ts'
import { cpuSeconds } from '../proc.ts'
import { pinSelf, spawnGateway, spawnUpstream } from '../processes.ts'

const [which = 'chat', rounds = '6'] = process.argv.slice(2)
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const sides = []
for (const ids of ['sequential', 'random']) {
  const up = await spawnUpstream(0, { BENCH_IDS: ids })
  const gw = await spawnGateway({ core: 1, upstream: up.url, key })
  const call = surfaceCall(which === 'messages' ? 'messages' : 'chat', gw.url, key)
  await probe(call)
  sides.push({ ids, up, gw, call, records: 0, rounds: [] as string[], us: [] as number[] })
}
for (let r = 0; r < Number(rounds); r++)
  for (const s of sides) {
    const c0 = cpuSeconds(s.gw.pid)
    const x = await closedLoop(s.call, { connections: 64, durationS: 5, core: 0 })
    const us = ((cpuSeconds(s.gw.pid) - c0) * 1e6) / x.requests
    s.records += x.requests
    s.us.push(us)
    s.rounds.push(`${Math.round(s.records / 1000)}k: ${x.rps | 0}/s ${us.toFixed(0)} µs`)
  }
for (const s of sides) {
  const sorted = [...s.us].sort((a, b) => a - b)
  console.log(`${which} ${s.ids.padEnd(10)} median ${sorted[sorted.length >> 1]!.toFixed(0)} µs/req | ${s.rounds.join(' | ')}`)
  await s.gw.stop()
  await s.up.stop()
}
process.exit(0)
