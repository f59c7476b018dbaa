// The per-request CPU budget of a profiled path, in µs: the gateway's CPU per request
// (measured by prof.ts) spread over what the request thread's samples were doing. A native
// frame or one of Bun's own modules (fetch, JSON.parse, bun:sqlite, stdout) counts for the
// source file that called it, and so does the SQL seam (src/db/); samples of the garbage
// collector count as GC; the rest of the CPU per request (the HTTP client
// thread, JIT and GC helper threads, the checkpoint worker) is "other threads".
//   bun scripts/bench/budget.ts <profile dir>:<CPU ms a request>:<request thread share> …
// (prof.ts prints all three; one column per profile, the last one sorts the rows)
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
  [/src\/generations\//, 'recording (records, rollup, SQLite)'],
  [/src\/surfaces\/responses\/thread\.ts/, 'responses threads (SQLite)'],
  [/src\/auth\/|src\/http\/pipeline\.ts/, 'request id, IP, auth, rate limits, headers'],
  [/src\/http\/log\.ts/, 'access log'],
  [/src\/http\/(body|json-safe)\.ts/, 'body read, JSON parse and checks'],
  [/src\/surfaces\/|src\/routing\/|src\/config\/|src\/media\//, 'decode, validate, rules, encode'],
  [/src\/pipeline\/|src\/tokens\/|src\/ir\//, 'pipeline bookkeeping (outcome, admission, signals)'],
  [/node_modules\/elysia|src\/server\.ts|src\/http\/direct\.ts|src\/app\.ts/, 'server and routing'],
]

export const TRANSACTIONS = 'transactions: BEGIN and COMMIT (records and threads alike)'

/**
 * The category of one sample, from the frames' source URLs, innermost first. Bun's own modules
 * (bun:sqlite, internal streams) count for the source that called them; so does the SQL seam
 * (src/db/), which every store's statements pass through: a thread's write is the responses
 * threads', a record's the recording's. What the seam runs with no caller in src/ on the
 * stack (a transaction's BEGIN and COMMIT, which run on a later turn of the promise chain) is
 * a row of its own: it cannot say whose transaction it was.
 */
export function categoryOf(urls: readonly string[]): string {
  let seam = false
  for (const url of urls) {
    if (!url.includes('/src/') && !url.includes('/node_modules/')) continue
    if (/src\/db\//.test(url)) {
      seam = true
      continue
    }
    return CATEGORIES.find(([re]) => re.test(url))?.[1] ?? 'other JavaScript'
  }
  return seam ? TRANSACTIONS : 'unattributed native'
}

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
    const urls: string[] = []
    for (let id: number | undefined = s; id !== undefined; id = parent.get(id)) urls.push(byId.get(id)!.callFrame.url)
    const cat = name === '(garbage collector)' ? 'garbage collector' : categoryOf(urls)
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
  const cols: Map<string, number>[] = []
  for (const arg of process.argv.slice(2)) {
    const [dir, cpu, share] = arg.split(':')
    const { counts, total } = load(dir!)
    cols.push(budget(counts, total, Number(cpu), Number(share)))
  }
  const cats = [...new Set(cols.flatMap((c) => [...c.keys()]))].sort((a, b) => (cols.at(-1)!.get(b) ?? 0) - (cols.at(-1)!.get(a) ?? 0))
  for (const c of cats) console.log(`| ${c} | ${cols.map((col) => (col.get(c) ?? 0).toFixed(1)).join(' | ')} |`)
  console.log(`| total | ${cols.map((col) => [...col.values()].reduce((a, b) => a + b, 0).toFixed(1)).join(' | ')} |`)
}
