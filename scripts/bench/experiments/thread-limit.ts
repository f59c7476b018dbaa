// Continuing a responses thread at its size bound (responses.max_thread_bytes, 32 MiB by
// default): how long /health waits meanwhile, and how far the gateway's RSS grows. Run:
//   bun scripts/bench/experiments/thread-limit.ts [turn MiB, default 4] [turns, default 7] [mock | upstream]
// A gateway subprocess on a temp data dir, the mock provider; /health is probed every 5 ms
// while one continuation of the whole thread runs.
import { fixtureJson, startFakeUpstream } from '../../../test/helpers/fake-upstream.ts'
import { KEY, startExperimentGateway } from './gateway.ts'

const turnMiB = Number(process.argv[2] ?? 4)
const turns = Number(process.argv[3] ?? 7)
// `upstream`: gpt-4o on a fake OpenAI upstream (the pass-through path) instead of the mock
const viaUpstream = process.argv[4] === 'upstream'
const up = viaUpstream ? await startFakeUpstream() : undefined
up?.script(() => ({ json: { ...fixtureJson('openai/responses/nonstream-text.json'), id: `resp_${crypto.randomUUID().replaceAll('-', '')}` } }))
const model = viaUpstream ? 'gpt-4o' : 'mock-gpt'
const gw = await startExperimentGateway('thread-limit', up ? { OPENAI_API_KEY: 'sk-fake', OPENAI_BASE_URL: up.url } : {})
const { url, rss } = gw
const post = async (body: unknown) => {
  const r = await fetch(`${url}/api/alpha/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const j = (await r.json()) as { id?: string; error?: string }
  if (r.status !== 200) throw new Error(`${r.status} ${j.error}`)
  return j.id!
}

let prev: string | undefined
const word = 'w'.repeat(1023) + ' '
for (let i = 0; i < turns; i++) prev = await post({ model, input: `mock: text t${i}\n${word.repeat(turnMiB * 1024)}`, ...(prev ? { previous_response_id: prev } : {}) })
Bun.gc(true)
await Bun.sleep(500)
const before = rss()
let peak = before
let probing = true
const health: number[] = []
const probes = (async () => {
  while (probing) {
    const t0 = performance.now()
    await fetch(`${url}/health`)
    health.push(performance.now() - t0)
    peak = Math.max(peak, rss())
    await Bun.sleep(5)
  }
})()
const t0 = performance.now()
await post({ model, previous_response_id: prev, input: 'mock: text go on' })
const took = performance.now() - t0
probing = false
await probes
health.sort((a, b) => a - b)
const threadMiB = (turns * turnMiB).toFixed(1)
console.log(`thread of ${turns} turns × ${turnMiB} MiB (~${threadMiB} MiB stored): continuation took ${took.toFixed(0)} ms`)
console.log(`/health during it: ${health.length} probes, max ${health.at(-1)!.toFixed(1)} ms, p50 ${health[Math.floor(health.length / 2)]!.toFixed(1)} ms`)
console.log(`RSS: ${(before / 2 ** 20).toFixed(0)} MiB before, peak ${(peak / 2 ** 20).toFixed(0)} MiB: growth ${((peak - before) / 2 ** 20).toFixed(0)} MiB = ${((peak - before) / (turns * turnMiB * 2 ** 20)).toFixed(2)} × the thread`)
await gw.stop()
await up?.stop()
