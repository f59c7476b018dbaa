// The per-request CPU budget of a profiled path, in µs: the gateway's CPU per request
// (measured by prof.ts) spread over what the request thread's samples were doing. A native
// frame or one of Bun's own modules (fetch, JSON.parse, bun:sqlite, stdout) counts for the
// source file that called it; samples of
// the garbage collector count as GC; the rest of the CPU per request (the HTTP client
// thread, JIT and GC helper threads, the checkpoint worker) is "other threads".
//   bun scripts/bench/budget.ts <profile dir> <CPU ms a request> [<profile dir> <CPU ms>]…
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

interface Node {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}

/** First match wins: (where the sample's nearest source file is, which category). */
export const CATEGORIES: [RegExp, string][] = [
  [/src\/providers\/http\.ts|src\/providers\/\w+\/adapter\.ts/, 'upstream call (fetch, retries, timeout)'],
  [/src\/providers\/.*tap|src\/routing\/sse-events\.ts|src\/pipeline\/(relay|reply|sse)\.ts/, 'reply: read, tap (usage, id), relay'],
  [/src\/generations\/|src\/db\//, 'recording (records, rollup, SQLite)'],
  [/src\/surfaces\/responses\/thread\.ts/, 'responses threads (SQLite)'],
  [/src\/auth\/|src\/http\/pipeline\.ts/, 'request id, IP, auth, rate limits, headers'],
  [/src\/http\/log\.ts/, 'access log'],
  [/src\/http\/(body|json-safe)\.ts/, 'body read, JSON parse and checks'],
  [/src\/surfaces\/|src\/routing\/|src\/config\/|src\/media\//, 'decode, validate, rules, encode'],
  [/src\/pipeline\/|src\/tokens\/|src\/ir\//, 'pipeline bookkeeping (outcome, admission, signals)'],
  [/node_modules\/elysia|src\/server\.ts|src\/http\/direct\.ts|src\/app\.ts/, 'server and routing'],
]

function load(dir: string) {
  const f = readdirSync(dir).filter((x) => x.endsWith('.cpuprofile')).sort().at(-1)!
  const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { nodes: Node[]; samples: number[] }
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const counts = new Map<string, number>()
  let total = 0
  for (const s of p.samples) {
    const name = byId.get(s)!.callFrame.functionName
    if (name === '(idle)' || name === '(program)' || name === '(root)') continue
    total++
    let cat = name === '(garbage collector)' ? 'garbage collector' : 'unattributed native'
    if (cat !== 'garbage collector') {
      for (let id: number | undefined = s; id !== undefined; id = parent.get(id)) {
        const url = byId.get(id)!.callFrame.url
        // Bun's own modules (bun:sqlite, internal streams) count for the source that called them
        if (!url.includes('/src/') && !url.includes('/node_modules/')) continue
        cat = CATEGORIES.find(([re]) => re.test(url))?.[1] ?? 'other JavaScript'
        break
      }
    }
    counts.set(cat, (counts.get(cat) ?? 0) + 1)
  }
  return { counts, total }
}

/** µs a request per category, given the request thread's share of the process's CPU. */
export function budget(counts: Map<string, number>, total: number, cpuMsPerRequest: number, threadShare: number) {
  const us = cpuMsPerRequest * 1000
  const rows = new Map<string, number>()
  for (const [cat, n] of counts) rows.set(cat, (n / total) * us * threadShare)
  rows.set('other threads (HTTP client, JIT, GC helpers, checkpoints)', us * (1 - threadShare))
  return rows
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  // the request thread's share of the gateway's CPU, measured per thread by prof.ts runs (THREAD_SHARE)
  const share = Number(process.env.THREAD_SHARE ?? 0.85)
  const cols: Map<string, number>[] = []
  for (let i = 0; i + 1 < args.length; i += 2) {
    const { counts, total } = load(args[i]!)
    cols.push(budget(counts, total, Number(args[i + 1]), share))
  }
  const cats = [...new Set(cols.flatMap((c) => [...c.keys()]))].sort((a, b) => (cols.at(-1)!.get(b) ?? 0) - (cols.at(-1)!.get(a) ?? 0))
  for (const c of cats) console.log(`| ${c} | ${cols.map((col) => (col.get(c) ?? 0).toFixed(1)).join(' | ')} |`)
  console.log(`| total | ${cols.map((col) => [...col.values()].reduce((a, b) => a + b, 0).toFixed(1)).join(' | ')} |`)
}
