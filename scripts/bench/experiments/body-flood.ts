// Experiment: N clients send a JSON body just under the body limit at the same moment, to the
// chat route and to the messages route (mock models), and the gateway's peak RSS (VmHWM, reset
// as the flood starts) is read once every answer is in; each route on a gateway of its own, so
// the memory one route's flood leaves with the allocator is not the other's baseline. Each body
// is a long session: about 1 KiB a message, as many messages as fit. The statuses are counted.
//   bun scripts/bench/experiments/body-flood.ts [N=100] [MiB=30]
// SWITCHYARD_* variables in this process's environment reach the gateway (a budget to compare).
import { resetPeak, memory } from '../proc.ts'
import { KEY, startExperimentGateway } from './gateway.ts'

const N = Number(process.argv[2] ?? 100)
const MIB = Number(process.argv[3] ?? 30)

const passed = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('SWITCHYARD_')))

/** A body of about `bytes`: messages of ~1 KiB of text each. */
function sessionBody(model: string, bytes: number, extra: Record<string, unknown>): Uint8Array {
  const text = 'lorem ipsum dolor sit amet '.repeat(38)
  const one = JSON.stringify({ role: 'user', content: text }).length + 1
  const count = Math.floor((bytes - 200) / one)
  const messages = Array.from({ length: count }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text }))
  if (count % 2 === 0) messages.push({ role: 'user', content: 'end' })
  return new TextEncoder().encode(JSON.stringify({ model, ...extra, messages }))
}

async function flood(label: string, path: string, body: Uint8Array, headers: Record<string, string>) {
  const gw = await startExperimentGateway('body-flood', passed)
  const reset = resetPeak(gw.pid)
  const before = memory(gw.pid)
  const t0 = performance.now()
  const statuses = await Promise.all(
    Array.from({ length: N }, () =>
      fetch(gw.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body as unknown as BodyInit, keepalive: false })
        .then(async (r) => (await r.arrayBuffer(), r.status))
        .catch(() => 0),
    ),
  )
  const after = memory(gw.pid)
  const counts: Record<number, number> = {}
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1
  console.log(
    `${label}: ${N} × ${(body.byteLength / 2 ** 20).toFixed(1)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s; statuses ${JSON.stringify(counts)}; ` +
      `RSS before ${before.rssMiB.toFixed(0)} MiB, peak (VmHWM${reset ? '' : ', not reset'}) ${after.hwmMiB.toFixed(0)} MiB, after ${after.rssMiB.toFixed(0)} MiB`,
  )
  await gw.stop()
}

const bytes = MIB * 2 ** 20
await flood('chat', '/api/alpha/v1/chat/completions', sessionBody('mock-gpt', bytes, { max_tokens: 16 }), { authorization: `Bearer ${KEY}` })
await flood('messages', '/api/beta/v1/messages', sessionBody('mock-claude', bytes, { max_tokens: 16 }), { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' })
process.exit(0)
