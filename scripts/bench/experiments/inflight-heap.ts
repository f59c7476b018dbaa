// Experiment (docs/bench.md): what a request holds while it waits for its upstream, by kind and
// name of object (closures by their function's name), from two heap snapshots of the gateway:
// idle, and with N requests held open by an upstream that answers after a delay. Their
// difference over N is the request's live objects then; it names what memory a request (and an
// open stream) keeps, which allocations.ts and object-counts.ts cannot.
//   bun scripts/bench/experiments/inflight-heap.ts [tree] [chat|messages|responses] [n] [stream]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { surfaceCall, type Surface } from '../paths.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream } from '../processes.ts'

const [tree = '.', which = 'chat', nArg = '250', streamArg] = process.argv.slice(2)
const root = tree === '.' ? ROOT : resolve(tree)
const n = Number(nArg)
const stream = streamArg === 'stream'
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
const dir = mkdtempSync(join(tmpdir(), 'switchyard-heap-'))
const file = join(dir, 'heap.json')
pinSelf(0)
const delayMs = 4000
const upstream = await spawnUpstream(0, { UPSTREAM_DELAY_MS: String(delayMs) })
const env = { BUN_OPTIONS: `--preload ${join(import.meta.dir, 'counts-preload.ts')}`, SNAPSHOT_TO: file, COUNTS_TO: join(dir, 'counts.json') }
const gw = await spawnGateway({ core: 1, upstream: upstream.url, key, root, env })

interface Kind { count: number; bytes: number }
async function snapshot(): Promise<Map<string, Kind>> {
  rmSync(file, { force: true })
  process.kill(gw.pid, 'SIGUSR1')
  let text = ''
  for (let i = 0; i < 400 && !text; i++) {
    await Bun.sleep(50)
    try {
      const t = readFileSync(file, 'utf8')
      JSON.parse(t)
      text = t
    } catch {}
  }
  const h = JSON.parse(text)
  const f = h.snapshot.meta.node_fields.length
  const ef = h.snapshot.meta.edge_fields.length
  const types: string[] = h.snapshot.meta.node_types[0]
  const edgeTypes: string[] = h.snapshot.meta.edge_types[0]
  // each node's first edge; a scope (JSLexicalEnvironment) is named by its variables, a closure
  // (its name is seldom kept) by its scope's
  const firstEdge: number[] = []
  for (let i = 0, e = 0; i < h.nodes.length; i += f) {
    firstEdge.push(e)
    e += h.nodes[i + 4]
  }
  const edgesOf = (i: number) => {
    const out: { type: string; name: string; to: number }[] = []
    for (let j = 0; j < h.nodes[i + 4]; j++) {
      const b = (firstEdge[i / f]! + j) * ef
      const type = edgeTypes[h.edges[b]]!
      out.push({ type, name: type === 'element' || type === 'hidden' ? '' : String(h.strings[h.edges[b + 1]]), to: h.edges[b + 2] })
    }
    return out
  }
  const scopeName = (i: number) => '{' + edgesOf(i).filter((e) => e.type === 'context' || e.type === 'property').map((e) => e.name).filter((n) => n && n !== '__proto__').slice(0, 8).join(',') + '}'
  const out = new Map<string, Kind>()
  for (let i = 0; i < h.nodes.length; i += f) {
    const type = types[h.nodes[i]]!
    let name = type === 'closure' || type === 'object' || type === 'native' || type === 'hidden' ? String(h.strings[h.nodes[i + 1]]).slice(0, 60) : ''
    if (name === 'system / JSLexicalEnvironment') name = 'scope ' + scopeName(i)
    else if (type === 'closure' && (name === 'Function' || name === 'AsyncFunction')) {
      const scope = edgesOf(i).find((e) => e.type === 'internal' && String(h.strings[h.nodes[e.to + 1]]).includes('JSLexicalEnvironment'))
      if (scope) name += ' in ' + scopeName(scope.to)
    } else if (name === 'Object') name += ' ' + scopeName(i)
    const k = `${type} ${name}`
    const e = out.get(k) ?? { count: 0, bytes: 0 }
    e.count++
    e.bytes += h.nodes[i + 3]
    out.set(k, e)
  }
  return out
}

const call = surfaceCall(which as Surface, gw.url, key, stream)
const send = () => fetch(call.url, { method: call.method, headers: call.headers, body: call.body }).then((r) => r.text())
// warm: the same shape once, then idle
await Promise.all(Array.from({ length: Math.min(n, 200) }, send))
const idle = await snapshot()
const held = Array.from({ length: n }, send)
await Bun.sleep(delayMs / 2)
const busy = await snapshot()
const bodies = await Promise.all(held)
const ok = bodies.filter((b) => b.includes(call.expect)).length
await gw.stop()
await upstream.stop()
rmSync(dir, { recursive: true, force: true })

const rows = [...new Set([...idle.keys(), ...busy.keys()])].map((k) => {
  const a = idle.get(k) ?? { count: 0, bytes: 0 }
  const b = busy.get(k) ?? { count: 0, bytes: 0 }
  return { k, count: (b.count - a.count) / n, bytes: (b.bytes - a.bytes) / n }
})
rows.sort((x, y) => y.bytes - x.bytes)
console.log(`${which}${stream ? ' stream' : ''}: ${n} requests held (${ok} answered well)`)
console.log('kind\tcount a request\tbytes a request')
for (const r of rows.filter((r) => Math.abs(r.count) >= 0.5)) console.log(`${r.k}\t${r.count.toFixed(2)}\t${r.bytes.toFixed(0)}`)
const total = rows.reduce((s, r) => s + r.bytes, 0)
console.log(`total\t${rows.reduce((s, r) => s + r.count, 0).toFixed(1)}\t${total.toFixed(0)}`)
