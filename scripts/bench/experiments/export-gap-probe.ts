// Where an export's loop gap goes: N exports of a 50,000-item batch at once, the loop's ticks
// (a 1 ms interval) logged beside each page read and each encode, and the worst gap's contents told.
// bun scripts/bench/experiments/export-gap-probe.ts [at once] [zip|ndjson|gzip] [tries]
import { startBatchRig } from '../../../test/batches/helpers.ts'
import { wideBatch } from '../../../test/batches/wide-batch.ts'
import { loadavg } from 'node:os'

const N = Number(process.argv[2] ?? 16)
const kind = process.argv[3] ?? 'zip'
const tries = Number(process.argv[4] ?? 5)
const rig = await startBatchRig({ upstream: false })
const id = await wideBatch(rig, 50_000)
const store = rig.gw.services.batches!.store
const url = `/api/v1/batches/${id}/export${kind === 'zip' ? '?format=zip' : kind === 'gzip' ? '?gzip=true' : ''}`
const one = async () => (await rig.call('GET', url)).arrayBuffer()
await one()

type Ev = [string, number, number]
let log: Ev[] = []
const results = store.results.bind(store)
store.results = async (...a: Parameters<typeof results>) => {
  const t = performance.now()
  const r = await results(...a)
  log.push(['read', t, performance.now()])
  return r
}
const encode = TextEncoder.prototype.encode
TextEncoder.prototype.encode = function (s?: string) {
  const t = performance.now()
  const r = encode.call(this, s)
  log.push(['encode', t, performance.now()])
  return r
}
const si = globalThis.setImmediate
globalThis.setImmediate = ((fn: (...a: unknown[]) => void, ...a: unknown[]) => si(() => { log.push(['imm', performance.now(), performance.now()]); fn(...a) })) as typeof setImmediate
for (let k = 0; k < tries; k++) {
  log = []
  const ticks: number[] = []
  const iv = setInterval(() => ticks.push(performance.now()), 1)
  await Promise.all(Array.from({ length: N }, one))
  clearInterval(iv)
  let worst = 0, at = 0
  for (let i = 1; i < ticks.length; i++) if (ticks[i]! - ticks[i - 1]! > worst) (worst = ticks[i]! - ticks[i - 1]!), (at = i)
  const inGap = log.filter((e) => e[1] >= ticks[at - 1]! && e[2] <= ticks[at]!)
  const sum = (w: string) => +inGap.filter((e) => e[0] === w).reduce((s, e) => s + e[2] - e[1], 0).toFixed(1)
  // the most reads between two ticks anywhere in the run
  let most = 0
  for (let i = 1, j = 0; i < ticks.length; i++) {
    let c = 0
    while (j < log.length && log[j]![1] < ticks[i]!) (c += log[j]![0] === 'read' ? 1 : 0), j++
    most = Math.max(most, c)
  }
  // the most pages read with no turn of the loop (setImmediate) between them
  let chained = 0
  for (let i = 0, c = 0; i < log.length; i++) (c = log[i]![0] === 'imm' ? 0 : c + (log[i]![0] === 'read' ? 1 : 0)), (chained = Math.max(chained, c))
  const maxRead = Math.max(...log.filter((e) => e[0] === 'read').map((e) => e[2] - e[1]))
  if (process.env.SHOW) console.log(inGap.map((e) => `${e[0]}@${(e[1] - ticks[at - 1]!).toFixed(1)}+${(e[2] - e[1]).toFixed(1)}`).join(' '))
  console.log(JSON.stringify({ load: loadavg()[0]!.toFixed(2), N, kind, worstGap: Math.round(worst), readsInGap: inGap.filter((e) => e[0] === 'read').length, readMs: sum('read'), encodes: inGap.filter((e) => e[0] === 'encode').length, encodeMs: sum('encode'), mostReadsBetweenTicks: most, chained, longestRead: +maxRead.toFixed(1) }))
}
await rig.stop()
