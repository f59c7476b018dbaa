// Summarise a .cpuprofile written by `npm run bench -- --profile`: where the gateway's
// JavaScript time goes, by function (self) and by source file (inclusive), from sample
// counts. (Bun's --cpu-prof-md weighs samples by the gap before them, which charges idle
// time to whatever ran last; counting samples does not.) Also lists the longest runs of
// back-to-back samples inside one stack: event-loop stalls, the usual cause of a bad p99.
//   bun scripts/bench/profile-summary.ts <file.cpuprofile | dir> [top] [skip-seconds]
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from './processes.ts'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
}

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)', '(root)'])

function newestProfile(path: string): string {
  if (!statSync(path).isDirectory()) return path
  const files = readdirSync(path).filter((f) => f.endsWith('.cpuprofile'))
  if (files.length === 0) throw new Error(`no .cpuprofile in ${path}`)
  return join(path, files.sort().at(-1)!)
}

const where = (n: Node) => {
  const url = n.callFrame.url ? relative(ROOT, n.callFrame.url.replace(/^file:\/\//, '')) : '[native]'
  return `${n.callFrame.functionName || '(anonymous)'} ${url}${n.callFrame.lineNumber >= 0 ? ':' + (n.callFrame.lineNumber + 1) : ''}`
}

export function summarizeProfile(p: Profile, top = 25, skipS = 0) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const stack = (id: number) => {
    const s: Node[] = []
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) s.push(byId.get(cur)!)
    return s
  }

  const self = new Map<string, number>()
  const files = new Map<string, number>()
  let busy = 0
  let t = 0
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]! / 1e6
    if (t < skipS) continue
    const s = stack(p.samples[i]!)
    if (IDLE.has(s[0]!.callFrame.functionName) && s.length <= 2) continue
    busy++
    // a native function is named with its nearest JavaScript caller, which is what one can change
    const caller = s[0]!.callFrame.url ? undefined : s.find((n) => n.callFrame.url && !n.callFrame.url.startsWith('native'))
    const name = caller ? `${where(s[0]!)} ← ${where(caller)}` : where(s[0]!)
    self.set(name, (self.get(name) ?? 0) + 1)
    const seen = new Set<string>()
    for (const n of s) {
      const f = n.callFrame.url ? relative(ROOT, n.callFrame.url.replace(/^file:\/\//, '')).replace(/^node_modules\/([^/]+).*/, 'node_modules/$1') : ''
      if (f && !seen.has(f)) {
        seen.add(f)
        files.set(f, (files.get(f) ?? 0) + 1)
      }
    }
  }

  // runs of consecutive samples ~1 interval apart sharing the same outermost gateway frame
  const stalls: { ms: number; at: string }[] = []
  let runStart = 0
  let runMs = 0
  let clock = 0
  for (let i = 1; i <= p.samples.length; i++) {
    clock += (p.timeDeltas[i] ?? 0) / 1e6
    if (clock < skipS) continue
    const same = i < p.samples.length && p.samples[i] === p.samples[i - 1] && p.timeDeltas[i]! < 3000
    if (same) runMs += p.timeDeltas[i]! / 1000
    else {
      if (runMs >= 3) stalls.push({ ms: runMs, at: stack(p.samples[runStart]!).slice(0, 4).map(where).join(' ← ') })
      runStart = i
      runMs = 0
    }
  }

  const pct = (n: number) => `${((100 * n) / busy).toFixed(1)}%`
  const rank = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top)
  return {
    busySamples: busy,
    self: rank(self).map(([k, n]) => `${pct(n).padStart(6)}  ${k}`),
    files: rank(files).map(([k, n]) => `${pct(n).padStart(6)}  ${k}`),
    stalls: stalls.sort((a, b) => b.ms - a.ms).slice(0, 10).map((s) => `${s.ms.toFixed(1)} ms  ${s.at}`),
  }
}

if (import.meta.main) {
  const file = newestProfile(process.argv[2] ?? join(import.meta.dir, 'profile'))
  const s = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')), Number(process.argv[3] ?? 25), Number(process.argv[4] ?? 0))
  console.log(`${file}: ${s.busySamples} busy samples\n`)
  console.log('Self time by function (share of busy samples)\n' + s.self.join('\n'))
  console.log('\nInclusive by source file\n' + s.files.join('\n'))
  console.log('\nLongest single-stack runs (stalls ≥ 3 ms)\n' + (s.stalls.join('\n') || '(none)'))
}
