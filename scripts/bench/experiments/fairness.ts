// One key's heavy work beside another key's small requests: key B's latency idle, then
// while key A sends large prompts, then while key A's big batch runs. Run:
//   bun scripts/bench/experiments/fairness.ts [A's prompts, default 10] [MiB each, default 1] [kind: word (random letters, no space) | prose | parts]
// `parts`: each of A's bodies is a million one-letter content parts (about 25 MiB, whatever the
// MiB given), which the gateway refuses (400) for holding too many parts.
// A gateway subprocess on a temp data dir, the mock provider (it counts every prompt's
// tokens, the work the token workers share). Prints B's p50/p99 in each phase.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startExperimentGateway } from './gateway.ts'

const heavy = Number(process.argv[2] ?? 10)
const mib = Number(process.argv[3] ?? 1)
const kind = process.argv[4] ?? 'word'
const gw = await startExperimentGateway('fairness', { SWITCHYARD_TOKEN_WORKERS: process.env.SWITCHYARD_TOKEN_WORKERS })
const url = gw.url
const [keyA, keyB] = [await gw.newKey('a'), await gw.newKey('b')]

const chat = async (key: string, content: string) => {
  const t0 = performance.now()
  const r = await fetch(`${url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content }] }) })
  await r.arrayBuffer()
  if (r.status !== 200) throw new Error(`status ${r.status}`)
  return performance.now() - t0
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!
const small = async (n: number) => {
  const ms: number[] = []
  for (let i = 0; i < n; i++) ms.push(await chat(keyB, `mock: text hello ${i}`))
  return ms
}
const show = (what: string, ms: number[]) =>
  console.log(`${what.padEnd(34)} B p50 ${pct(ms, 50).toFixed(1)} ms  p90 ${pct(ms, 90).toFixed(1)} ms  p99 ${pct(ms, 99).toFixed(1)} ms  max ${pct(ms, 100).toFixed(1)} ms  (n=${ms.length})`)

// enough idle requests that their p99 is not one stray sample
await small(200)
show('idle', await small(2000))

// prose is the cheap case of BPE; one long run of random letters is the dear one
const letters = () => Array.from({ length: mib * 1048576 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('')
const big = kind === 'parts' ? '' : kind === 'prose' ? 'the quick brown fox jumps over it. '.repeat(Math.ceil((mib * 1048576) / 35)).slice(0, mib * 1048576) : letters()
// key A's requests go from curl processes: this process's own loop then only times key B
const dir = mkdtempSync(join(tmpdir(), 'sy-fairness-body-'))
const bodyFile = join(dir, 'big.json')
const content = kind === 'parts' ? Array.from({ length: 1_000_000 }, () => ({ type: 'text', text: 'a' })) : `mock: text ok\n${big}`
await Bun.write(bodyFile, JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content }] }))
const expected = kind === 'parts' ? '400' : '200'
const t0 = performance.now()
let aDone = 0
const curl = () =>
  Bun.spawn(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `authorization: Bearer ${keyA}`, '-H', 'content-type: application/json', '--data-binary', `@${bodyFile}`, `${url}/api/alpha/v1/chat/completions`], { stdout: 'pipe' })
const flood = Promise.all(Array.from({ length: heavy }, async () => {
  const p = curl()
  const code = await new Response(p.stdout).text()
  if (code !== expected) throw new Error(`key A got ${code}`)
  aDone++
}))
const during: number[] = []
while (aDone < heavy) during.push(await chat(keyB, 'mock: text hello'))
await flood
show(`during A's ${heavy} × ${mib} MiB (${kind})`, during)
console.log(`A's prompts all answered after ${((performance.now() - t0) / 1000).toFixed(2)} s`)
const status = await Bun.file(`/proc/${gw.pid}/status`).text()
console.log(`gateway RSS now ${Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024)} MiB, peak ${Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024)} MiB, threads ${/Threads:\s+(\d+)/.exec(status)![1]}`)

await gw.stop()
rmSync(dir, { recursive: true, force: true })
