// How long a 50,000-item batch's results pages and exports hold the in-process gateway's loop,
// and where the time goes. bun scripts/bench/experiments/results-gap.ts [rounds] [pages|zip|ndjson]
import { startBatchRig } from '../../../test/batches/helpers.ts'
import { wideBatch } from '../../../test/batches/wide-batch.ts'
import { worstGap } from '../../../test/helpers/loop-gap.ts'
import { itemResultText } from '../../../src/batches/shapes.ts'
import { loadavg } from 'node:os'

const ITEMS = 50_000
const rounds = Number(process.argv[2] ?? 5)
/** pages, zip, ndjson: what each round times (all, when none is named) */
const only = process.argv[3]
const rig = await startBatchRig({ upstream: false })
const id = await wideBatch(rig, ITEMS)
const store = rig.gw.services.batches!.store
const b = (await store.byId(id))!

const page = async (offset: number) => (await rig.call('GET', `/api/v1/batches/${id}/results?offset=${offset}&limit=1000`)).arrayBuffer()
const zip = async () => (await rig.call('GET', `/api/v1/batches/${id}/export?format=zip`)).arrayBuffer()
const nd = async () => (await rig.call('GET', `/api/v1/batches/${id}/export`)).arrayBuffer()
await page(0), await zip(), await nd()

for (let r = 0; r < rounds; r++) {
  const t0 = performance.now()
  const read = await store.results(id, 20_000, 21_000, 1000)
  const t1 = performance.now()
  const text = read.map(itemResultText).join(',')
  const t2 = performance.now()
  const timed = (what: string, work: () => Promise<unknown>) => (only && only !== what ? Promise.resolve(-1) : worstGap(work))
  const gPages = await timed('pages', () => Promise.all(Array.from({ length: 8 }, (_, i) => page(i * 6000))))
  const gZip = await timed('zip', () => Promise.all(Array.from({ length: 4 }, zip)))
  const gNd = await timed('ndjson', () => Promise.all(Array.from({ length: 4 }, nd)))
  const gIdle = await worstGap(() => Bun.sleep(300))
  console.log(JSON.stringify({ load: loadavg()[0]!.toFixed(2), read1000ms: +(t1 - t0).toFixed(1), text1000ms: +(t2 - t1).toFixed(1), pageKB: text.length >> 10, gap8pages: Math.round(gPages), gap4zip: Math.round(gZip), gap4ndjson: Math.round(gNd), idle: Math.round(gIdle) }))
}
await rig.stop()
