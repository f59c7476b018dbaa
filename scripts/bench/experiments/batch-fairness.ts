// Key B's small batch alone, then behind key A's big ones: how long B's batch takes to end.
// Run:
//   bun scripts/bench/experiments/batch-fairness.ts [B's items, default 500] [A's batches, default 4] [A's items each, default 5000] [upstream ms]
// A gateway subprocess on a temp data dir, the default batch settings. Without `upstream ms`
// the items go to the mock provider (CPU-bound: the instance's CPU is what the keys share);
// with it, to a fake OpenAI upstream in this process that answers each after that many ms
// (bound by waiting, as real batch items are: the places are what the keys share).
import { startExperimentGateway } from './gateway.ts'

const bItems = Number(process.argv[2] ?? 500)
const aBatches = Number(process.argv[3] ?? 4)
const aItems = Number(process.argv[4] ?? 5000)
const upstreamMs = process.argv[5] === undefined ? undefined : Number(process.argv[5])
const upstream =
  upstreamMs === undefined
    ? undefined
    : Bun.serve({
        port: 0,
        async fetch() {
          await Bun.sleep(upstreamMs)
          const choice = { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop', logprobs: null }
          return Response.json({ id: 'chatcmpl-x', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [choice], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } })
        },
      })
const model = upstream ? 'gpt-4o-mini' : 'mock-gpt'
const gw = await startExperimentGateway('batch-fairness', {
  SWITCHYARD_BATCH_MAX_IN_FLIGHT: process.env.SWITCHYARD_BATCH_MAX_IN_FLIGHT,
  ...(upstream ? { OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}/v1` } : {}),
})
const url = gw.url
const [keyA, keyB] = [await gw.newKey('a'), await gw.newKey('b')]

async function create(key: string, n: number, tag: string): Promise<string> {
  const requests = Array.from({ length: n }, (_, i) => ({ custom_id: `${tag}-${i}`, model, messages: [{ role: 'user', content: `mock: text item ${i}` }] }))
  const res = await fetch(`${url}/api/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ requests }) })
  if (res.status !== 200) throw new Error(`create: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { id: string }).id
}
async function ended(key: string, id: string): Promise<number> {
  const t0 = performance.now()
  for (;;) {
    const b = (await (await fetch(`${url}/api/v1/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string }
    if (['completed', 'failed', 'cancelled', 'expired'].includes(b.status)) return performance.now() - t0
    await Bun.sleep(20)
  }
}

await ended(keyB, await create(keyB, 50, 'warm'))
const alone = await ended(keyB, await create(keyB, bItems, 'alone'))
console.log(`B's ${bItems} items alone: ${(alone / 1000).toFixed(2)} s`)
const aIds = await Promise.all(Array.from({ length: aBatches }, (_, i) => create(keyA, aItems, `a${i}`)))
await Bun.sleep(300)
const behind = await ended(keyB, await create(keyB, bItems, 'behind'))
console.log(`B's ${bItems} items beside A's ${aBatches} × ${aItems}: ${(behind / 1000).toFixed(2)} s (${(behind / alone).toFixed(2)}× alone)`)
const aTime = await Promise.all(aIds.map((id) => ended(keyA, id)))
console.log(`A's batches ended ${(Math.max(...aTime) / 1000).toFixed(2)} s after B's`)

await gw.stop()
upstream?.stop(true)
