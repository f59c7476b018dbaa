// How long the Responses surface's stored state holds the event loop on large threads: /health
// probed every 2 ms from this process while the gateway (a subprocess on a temp data dir, the
// mock provider) serves
//   - a turn continuing a 10,000-item (~10 MB) stored response (`previous_response_id`), and
//     `POST /responses/input_tokens` on it;
//   - the same on a `conv_…` conversation of 10,000 items;
//   - pages of `GET /responses/{id}/input_items` of a 60,000-item response: one after another
//     (each page's time), then 20 at once.
// Run: bun scripts/bench/experiments/stored-loop.ts [rounds, default 3]
import { KEY, startExperimentGateway } from './gateway.ts'

const rounds = Number(process.argv[2] ?? 3)
const gw = await startExperimentGateway('stored-loop', { SWITCHYARD_MAX_BODY_BYTES: String(64 * 2 ** 20) })
const { url } = gw
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const call = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${url}/api/alpha/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const j = (await r.json()) as Record<string, unknown>
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(j).slice(0, 300)}`)
  return j
}

/** The worst /health latency while `work` runs (probed from this process, every 2 ms). */
async function healthDuring(work: () => Promise<unknown>): Promise<{ worst: number; took: number }> {
  let probing = true
  let worst = 0
  const probes = (async () => {
    while (probing) {
      const t0 = performance.now()
      await (await fetch(`${url}/health`)).arrayBuffer()
      worst = Math.max(worst, performance.now() - t0)
      await Bun.sleep(2)
    }
  })()
  await Bun.sleep(20)
  const t0 = performance.now()
  await work()
  const took = performance.now() - t0
  probing = false
  await probes
  return { worst, took }
}

const filler = 'x'.repeat(1000)
const bigInput = (n: number, text: string) => [...Array.from({ length: n - 1 }, (_, i) => ({ role: 'user', content: `item ${i} ${text}` })), { role: 'user', content: 'mock: text ok' }]

// a stored response of 10,000 items of ~1 KB: a thread of ~10 MB
const thread = (await call('POST', '/responses', { model: 'mock-gpt', input: bigInput(10_000, filler) })).id as string
// a conversation of 10,000 items (a first turn's input is added to it)
const conv = (await call('POST', '/conversations', {})).id as string
await call('POST', '/responses', { model: 'mock-gpt', conversation: conv, input: bigInput(10_000, filler) })
// a response of 60,000 small items (~3 MB stored)
const wide = (await call('POST', '/responses', { model: 'mock-gpt', input: bigInput(60_000, 'x'.repeat(20)) })).id as string
Bun.gc(true)
await Bun.sleep(300)

const cases: [string, () => Promise<unknown>][] = [
  ['turn, previous_response_id (10,000 items, ~10 MB)', () => call('POST', '/responses', { model: 'mock-gpt', previous_response_id: thread, input: 'mock: text go on' })],
  ['input_tokens, previous_response_id', () => call('POST', '/responses/input_tokens', { model: 'mock-gpt', previous_response_id: thread, input: 'go on' })],
  ['input_tokens, conv_ conversation (10,000 items)', () => call('POST', '/responses/input_tokens', { model: 'mock-gpt', conversation: conv, input: 'go on' })],
  ['5 input_items pages in turn (60,000 items)', async () => {
    let after: string | undefined
    for (let k = 0; k < 5; k++) after = (await call('GET', `/responses/${wide}/input_items?limit=100${after ? `&after=${after}` : ''}`)).last_id as string
  }],
  ['20 input_items pages at once (60,000 items)', () => Promise.all(Array.from({ length: 20 }, () => call('GET', `/responses/${wide}/input_items?limit=100&order=asc`)))],
  // last: each turn adds its input and output to the conversation
  ['turn, conv_ conversation (10,000 items)', () => call('POST', '/responses', { model: 'mock-gpt', conversation: conv, input: 'mock: text go on' })],
]
console.log(`load before: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
for (const [name, work] of cases) {
  const worst: string[] = []
  const took: string[] = []
  for (let r = 0; r < rounds; r++) {
    const m = await healthDuring(work)
    worst.push(m.worst.toFixed(0))
    took.push(m.took.toFixed(0))
    await Bun.sleep(100)
  }
  console.log(`${name}: /health worst ${worst.join(' / ')} ms; took ${took.join(' / ')} ms`)
}
console.log(`load after: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
await gw.stop()
