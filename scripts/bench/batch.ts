// `bun scripts/bench/batch.ts`: the batch bench. A gateway (`switchyard serve`,
// pinned to core 1 as in the main bench, with the load driver and the fake upstream on core 0)
// runs a 50,000-item batch through the mock provider while an open-loop interactive chat load
// (pass-through to the fake upstream) measures what the batch costs interactive traffic. Then each export format of the 50,000
// results is streamed and the gateway's RSS watched. Targets: done in under 60 s;
// interactive p99 during the batch within 20 % of the same load without it; peak RSS growth
// under 200 MiB; each export streams with RSS growth under 64 MiB.
//   flags: --items N (50000) --rate R (interactive req/s, 200) --seconds S (interactive phase, 10)
//          --spread (the gateway not pinned: every core, shared with the driver and the upstream)
//          --no-exports (skip the export phase)
//          --workers W, --pace P (batches.workers, batches.max_items_per_second for the gateway)
//          --root DIR (run the gateway of another checkout: experiments)
//          --profile (the gateway writes a CPU profile to $TMPDIR/switchyard-batch-profile; see profile-summary.ts)
//          --quick (5,000 items, 4 s phases; nothing written) --render (docs/bench.md from the saved figures)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chatCall } from './call.ts'
import { openLoop, type OpenLoopResult } from './openloop.ts'
import { cpuSeconds, machine, memory, metered, resetPeak, threadCpuSeconds } from './proc.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream, type Child } from './processes.ts'
import { round } from './stats.ts'
import { batchSection, replaceBatchSection, type BatchBench } from './batch-report.ts'

const { values: flags } = parseArgs({
  options: {
    items: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    workers: { type: 'string' },
    pace: { type: 'string' },
    spread: { type: 'boolean' },
    'no-exports': { type: 'boolean' },
    root: { type: 'string' },
    profile: { type: 'boolean' },
    quick: { type: 'boolean' },
    render: { type: 'boolean' },
  },
})

const WARM_ITEMS = 200
const RESULTS = join(import.meta.dir, 'batch-results.json')
const DOC = join(ROOT, 'docs', 'bench.md')

const log = (msg: string) => process.stderr.write(`· ${msg}\n`)

/** Samples the gateway's RSS every 50 ms until stopped; the peak and the samples' count. */
function rssSampler(pid: number) {
  let peak = memory(pid).rssMiB
  let n = 0
  const timer = setInterval(() => {
    const r = memory(pid).rssMiB
    n++
    if (r > peak) peak = r
  }, 50)
  return {
    stop() {
      clearInterval(timer)
      const r = memory(pid).rssMiB
      return { peakMiB: Math.max(peak, r), samples: n }
    },
  }
}

/** The JSONL input: `n` chat items for the mock, each answering its own text. */
function jsonl(n: number): string {
  const lines: string[] = []
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({ custom_id: `item-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', max_tokens: 64, messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: `Item ${i}: what is ${i} plus ${i}? Reply with a short sentence.` }] } }))
  }
  return lines.join('\n') + '\n'
}

async function json(res: Response): Promise<any> {
  const text = await res.text()
  if (!res.ok) throw new Error(`${res.status}: ${text.slice(0, 300)}`)
  return JSON.parse(text)
}

async function main() {
  const items = Number(flags.items ?? (flags.quick ? 5_000 : 50_000))
  const rate = Number(flags.rate ?? 200)
  const seconds = Number(flags.seconds ?? (flags.quick ? 4 : 10))
  const notes: string[] = []
  if (flags.quick) notes.push('quick run: a smaller batch and short phases, rough figures')
  // the machine's cores (this process's own affinity is about to be one core)
  const cores = cpus().length
  // the driver and the fake upstream share core 0; the gateway may use every core
  if (!pinSelf(0)) notes.push('could not pin the load driver (taskset failed)')
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const children: Child[] = []
  const stopAll = () => Promise.all(children.reverse().map((c) => c.stop()))
  try {
    const upstream = await spawnUpstream(0)
    children.push(upstream)
    const env: Record<string, string> = {}
    if (flags.workers) env.SWITCHYARD_BATCH_WORKERS = flags.workers
    if (flags.pace) env.SWITCHYARD_BATCH_MAX_ITEMS_PER_SECOND = flags.pace
    if (flags.workers || flags.pace) notes.push(`gateway config: ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}`)
    if (flags.root) notes.push(`gateway from ${flags.root}`)
    const profileDir = flags.profile ? join(tmpdir(), 'switchyard-batch-profile') : undefined
    if (profileDir) mkdirSync(profileDir, { recursive: true })
    const gateway = await spawnGateway({ core: flags.spread ? null : 1, upstream: upstream.url, key, env, root: flags.root, profileDir })
    children.push(gateway)
    const gw = gateway.url
    const auth = { authorization: `Bearer ${key}` }
    log(`gateway ${gw} (pid ${gateway.pid}, ${flags.spread ? `${cores} cores, not pinned` : 'core 1'}), upstream ${upstream.url}`)
    if (flags.spread) notes.push('--spread: the gateway was not pinned; its threads shared both cores with the driver and the upstream')

    const interactive = chatCall('gpt via chat (pass-through)', gw + '/api/alpha/v1', key, 'gpt-4o-mini')
    log('warm-up')
    await openLoop(interactive, rate, 2000)
    const warm = await json(await fetch(gw + '/api/v1/batches', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ requests: Array.from({ length: WARM_ITEMS }, (_, i) => ({ model: 'mock-gpt', messages: [{ role: 'user', content: `warm ${i}` }] })) }) }))
    while ((await json(await fetch(`${gw}/api/v1/batches/${warm.id}`, { headers: auth }))).output_file_id == null) await Bun.sleep(100)

    log(`uploading ${items.toLocaleString()} items`)
    const text = jsonl(items)
    const form = new FormData()
    form.append('purpose', 'batch')
    form.append('file', new Blob([text]), 'bench.jsonl')
    const t0 = performance.now()
    const file = await json(await fetch(gw + '/api/v1/files', { method: 'POST', headers: auth, body: form }))
    const uploadMs = performance.now() - t0

    // each phase metered: CPU the rest of the machine used meanwhile is noise in its figures
    const pids = { gateway: gateway.pid, others: [upstream.pid] }
    const load = async (what: string) => {
      const m = await metered(pids, () => openLoop(interactive, rate, seconds * 1000))
      otherLoad[what] = m.otherCores
      if (m.otherCores > 0.1) log(`  noisy: other processes used ${(m.otherCores * 100).toFixed(0)}% of a core during "${what}"`)
      return m.result
    }
    const otherLoad: Record<string, number> = {}
    log(`interactive chat at ${rate}/s for ${seconds} s, without a batch`)
    const before = await load('before')

    Bun.gc(true)
    await Bun.sleep(500)
    const rssBefore = memory(gateway.pid).rssMiB
    const cpuBefore = cpuSeconds(gateway.pid)
    const threadsBefore = threadCpuSeconds(gateway.pid)
    // the kernel's peak from here on (≤ 256 MiB during the batch); if it refuses, the peak so far
    const hwmReset = resetPeak(gateway.pid)
    if (!hwmReset) notes.push('could not reset the gateway\'s VmHWM (clear_refs): the batch\'s peak RSS is the process\'s peak so far')
    const rss = rssSampler(gateway.pid)
    log('creating the batch, then the same interactive load while it runs')
    const c0 = performance.now()
    const batch = await json(await fetch(gw + '/api/v1/batches', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) }))
    const createMs = performance.now() - c0
    let done: any
    const poll = (async () => {
      for (;;) {
        const b = await json(await fetch(`${gw}/api/v1/batches/${batch.id}`, { headers: auth }))
        if (b.output_file_id != null || ['failed', 'cancelled', 'expired'].includes(b.status)) return (done = { ...b, at: performance.now() })
        await Bun.sleep(100)
      }
    })()
    const during = await load('during')
    const runningAfterLoad = done === undefined
    await poll
    const totalMs = done.at - c0
    const batchCpuS = cpuSeconds(gateway.pid) - cpuBefore
    const threadsAfter = threadCpuSeconds(gateway.pid)
    const threads = Object.entries(threadsAfter)
      .map(([t, v]) => [t.replace(/^\d+:/, ''), v - (threadsBefore[t] ?? 0)] as const)
      .filter(([, v]) => v >= 0.05)
      .sort((x, y) => y[1] - x[1])
    log(`gateway threads' CPU during the batch: ${threads.map(([t, v]) => `${t} ${v.toFixed(1)} s`).join(', ')}`)
    const peak = rss.stop()
    const batchHwmMiB = memory(gateway.pid).hwmMiB
    if (!runningAfterLoad) notes.push('the batch ended before the interactive phase did: part of that phase ran without it')
    if (done.status !== 'completed' || done.request_counts.completed !== items) notes.push(`batch ended ${done.status} with ${JSON.stringify(done.request_counts)}`)

    log('interactive chat again, after the batch')
    const after = await load('after')

    const exports: BatchBench['exports'] = []
    for (const [name, query] of (flags['no-exports'] ? [] : [['ndjson', ''], ['ndjson gzip', '?gzip=true'], ['zip', '?format=zip']]) as [string, string][]) {
      Bun.gc(true)
      await Bun.sleep(300)
      const base = memory(gateway.pid).rssMiB
      const reset = resetPeak(gateway.pid)
      const sampler = rssSampler(gateway.pid)
      const e0 = performance.now()
      const res = await fetch(`${gw}/api/v1/batches/${batch.id}/export${query}`, { headers: auth })
      let bytes = 0
      const reader = res.body!.getReader()
      for (;;) {
        const { done: end, value } = await reader.read()
        if (end) break
        bytes += value.byteLength
      }
      const p = sampler.stop()
      exports.push({ format: name, status: res.status, bytes, ms: performance.now() - e0, rssBeforeMiB: base, rssGrowthMiB: p.peakMiB - base, ...(reset ? { hwmMiB: memory(gateway.pid).hwmMiB } : {}) })
      log(`export ${name}: ${(bytes / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - e0) / 1000).toFixed(1)} s, RSS +${(p.peakMiB - base).toFixed(1)} MiB`)
    }

    const result: BatchBench = {
      date: new Date().toISOString(),
      machine: { ...machine(), nproc: cores },
      setup: { items, interactiveRate: rate, interactiveSeconds: seconds, pinned: !flags.spread, loadAvg: readFileSync('/proc/loadavg', 'utf8').trim(), notes },
      uploadMs,
      createMs,
      totalMs,
      itemsPerSecond: (items * 1000) / totalMs,
      gatewayCpuS: batchCpuS,
      counts: done.request_counts,
      interactive: { before: before.latency, during: during.latency, after: after.latency, errors: { before: errs(before), during: errs(during), after: errs(after) }, otherLoad },
      rss: { beforeMiB: rssBefore, peakMiB: peak.peakMiB, growthMiB: peak.peakMiB - rssBefore, hwmMiB: batchHwmMiB, hwmReset },
      exports,
    }
    console.log('\n' + batchSection(result))
    if (!flags.quick) {
      writeFileSync(RESULTS, JSON.stringify(result, (_, v) => (typeof v === 'number' && !Number.isInteger(v) ? round(v) : v), 2) + '\n')
      writeFileSync(DOC, replaceBatchSection(readFileSync(DOC, 'utf8'), batchSection(result)))
      console.log(`\nwrote ${RESULTS} and docs/bench.md`)
    }
  } finally {
    await stopAll()
  }
}

const errs = (r: OpenLoopResult) => r.sent - r.ok

if (flags.render) {
  const result = JSON.parse(readFileSync(RESULTS, 'utf8')) as BatchBench
  writeFileSync(DOC, replaceBatchSection(readFileSync(DOC, 'utf8'), batchSection(result)))
  console.log(batchSection(result) + '\n\nwrote docs/bench.md from ' + RESULTS)
  process.exit(0)
}

await main().catch((e) => {
  console.error(e instanceof Error ? e.stack : e)
  process.exit(1)
})
