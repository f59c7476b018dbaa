// The bench's ratio targets and their verdicts, the kept sections of
// docs/bench.md, the stream-disconnect driver, the stdout drain of a chatty child, and the
// budget's split of profile samples.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BatchBench } from '../../scripts/bench/batch-report.ts'
import { categoryOf, TRANSACTIONS } from '../../scripts/bench/budget.ts'
import { chatCall, messagesCall } from '../../scripts/bench/call.ts'
import { disconnects } from '../../scripts/bench/disconnects.ts'
import { memoryPhases } from '../../scripts/bench/memory-phases.ts'
import { candidatePaths, selected } from '../../scripts/bench/paths.ts'
import { spawnListening } from '../../scripts/bench/processes.ts'
import { markdownReport, textReport } from '../../scripts/bench/report.ts'
import type { Results } from '../../scripts/bench/results.ts'
import { BATCH, BUDGET, keepSections, replaceSection, sectionOf } from '../../scripts/bench/sections.ts'
import { medianBy } from '../../scripts/bench/stats.ts'
import { PATHS, verdicts } from '../../scripts/bench/targets.ts'
import { startUpstream } from '../../scripts/bench/upstream.ts'

const sum = (p50: number, p99 = p50) => ({ n: 100, p50, p90: p50, p99, max: p99, mean: p50 })
const cost = (cpuMsPerRequest: number) => ({ cpuMsPerRequest, coreBusy: 0.97, rssMiB: 100, otherCores: 0 })

/** A results file with one path measured every way: gateway and bare figures as given. */
function results(o: { path?: string; gwRps?: number; bareRps?: number; addedP50?: number; bareP50?: number; addedP99?: number; ttfb?: number; bareTtfb?: number; cpu200?: number; cpuSat?: number }): Results {
  const path = o.path ?? 'pass-through'
  return {
    date: '2026-11-23T18:00:00.000Z',
    machine: { nproc: 2, cpuModel: 'test', kernel: 'Linux', bun: '1' },
    setup: { gatewayCore: 1, loadCore: 0, closedLoopTool: 'wrk', loadAvg: '0', notes: [] },
    paths: {},
    openLoop: [
      { path, rate: 200, added: sum(0.5), referenceAdded: sum(0.3), cost: cost(o.cpu200 ?? 0.5), referenceCost: cost(0.4), baseline: { latency: sum(0.5) }, gateway: { errors: {}, latency: sum(1) }, otherCores: 0 },
      { path, rate: 1000, added: sum(o.addedP50 ?? 0.3, o.addedP99 ?? 0.5), referenceAdded: sum(o.bareP50 ?? 0.25, 0.2), cost: cost(0.3), baseline: { latency: sum(0.5) }, gateway: { errors: {}, latency: sum(1) }, otherCores: 0 },
    ],
    closedLoop: [{ path, baseline: { rps: 20000 }, gateway: { rps: o.gwRps ?? 9000, errors: 0, connections: 64 }, reference: { rps: o.bareRps ?? 15000 }, cost: cost(o.cpuSat ?? 0.3), referenceCost: cost(0.1), otherCores: 0 }],
    streams: [
      {
        path,
        added: { ttfb: sum(o.ttfb ?? 0.5), chunkDelay: sum(0.1) },
        referenceAdded: { ttfb: sum(o.bareTtfb ?? 0.4), chunkDelay: sum(0.1) },
        baseline: { ttfb: sum(0.3) },
        gateway: { rate: 100, ttfb: sum(0.8), spread: sum(1), errors: {} },
        cost: cost(1),
        otherCores: 0,
      },
    ],
    memory: { idleRssMiB: 70, finalRssMiB: 100, peakRssMiB: 180 },
  } as unknown as Results
}

const byLabel = (r: Results, batch?: BatchBench) => Object.fromEntries(verdicts(r, batch).map((v) => [v.label, v]))

describe('targets: ratios to the bare proxy of the same run', () => {
  test('throughput: a pass-through needs 60 % of the bare figure, a translated path 50 %', () => {
    expect(byLabel(results({ gwRps: 9000, bareRps: 15000 }))['pass-through: max req/s']).toMatchObject({ value: 0.6, pass: true, ratio: '60 %', gateway: '9,000 req/s', bare: '15,000 req/s' })
    expect(byLabel(results({ gwRps: 8999, bareRps: 15000 }))['pass-through: max req/s']!.pass).toBe(false)
    const t = byLabel(results({ path: 'translated', gwRps: 7600, bareRps: 15000 }))['translated: max req/s']!
    expect(t).toMatchObject({ pass: true, target: '≥ 50 % of bare chat' })
    expect(byLabel(results({ path: 'messages translated', gwRps: 7400, bareRps: 15000 }))['messages translated: max req/s']).toMatchObject({ pass: false, target: '≥ 50 % of bare messages' })
  })

  test('a closed-loop figure whose process was not the bottleneck says so', () => {
    const r = results({})
    r.closedLoop[0]!.cost.coreBusy = 0.95
    r.closedLoop[0]!.referenceCost = { ...r.closedLoop[0]!.cost, coreBusy: 0.3 }
    const v = byLabel(r)['pass-through: max req/s']!
    expect(v.gateway).toBe('9,000 req/s')
    expect(v.bare).toBe('15,000 req/s ⚠ core 30 % busy')
    // the bare figure is then too low and the ratio too kind: the verdict carries the mark
    expect(v).toMatchObject({ pass: true, doubtful: true })
    expect(textReport(r)).toMatch(/pass-through: max req\/s .* PASS ⚠/)
    expect(byLabel(results({}))['pass-through: max req/s']!.doubtful).toBe(false)
  })

  test('latency: added p50 within 0.1 ms of the bare added p50; p99 within 1 ms of direct', () => {
    const ok = byLabel(results({ addedP50: 0.34, bareP50: 0.25, addedP99: 1.0 }))
    expect(ok['pass-through: added p50 at 1,000 req/s']!.pass).toBe(true)
    expect(ok['pass-through: added p50 at 1,000 req/s']!.value).toBeCloseTo(0.09, 9)
    expect(ok['pass-through: added p99 at 1,000 req/s']).toMatchObject({ value: 1.0, pass: true })
    const miss = byLabel(results({ addedP50: 0.36, bareP50: 0.25, addedP99: 1.01 }))
    expect(miss['pass-through: added p50 at 1,000 req/s']).toMatchObject({ pass: false, ratio: '+0.11 ms' })
    expect(miss['pass-through: added p99 at 1,000 req/s']!.pass).toBe(false)
  })

  test('streams: pass-through first byte within 0.15 ms of the bare proxy; translated shown without a verdict', () => {
    expect(byLabel(results({ ttfb: 0.55, bareTtfb: 0.4 }))['pass-through stream: added first byte p50']!.pass).toBe(true)
    expect(byLabel(results({ ttfb: 0.56, bareTtfb: 0.4 }))['pass-through stream: added first byte p50']!.pass).toBe(false)
    const t = byLabel(results({ path: 'responses translated', ttfb: 2, bareTtfb: 0.4 }))['responses translated stream: added first byte p50']!
    expect(t).toMatchObject({ target: '—', pass: null, ratio: '+1.60 ms' })
  })

  test('idle cost: CPU per request at 200 req/s at most twice that at saturation', () => {
    expect(byLabel(results({ cpu200: 0.6, cpuSat: 0.3 }))['pass-through: CPU/req at 200 req/s ÷ at saturation']).toMatchObject({ value: 2, pass: true, ratio: '2.00 ×' })
    // the bare proxy's own ratio is shown for scale, and judges nothing
    expect(byLabel(results({ cpu200: 0.6, cpuSat: 0.3 }))['pass-through: CPU/req at 200 req/s ÷ at saturation']!.bare).toBe('0.400 / 0.100 ms: 4.00 ×')
    expect(byLabel(results({ cpu200: 0.61, cpuSat: 0.3 }))['pass-through: CPU/req at 200 req/s ÷ at saturation']!.pass).toBe(false)
  })

  test('each path is judged from its own rows: another path is not measured, not passed', () => {
    const v = byLabel(results({ path: 'messages pass-through' }))
    expect(v['messages pass-through: max req/s']!.pass).toBe(true)
    expect(v['pass-through: max req/s']).toMatchObject({ pass: null, gateway: 'not measured' })
    // a gateway figure without the bare proxy's is no ratio at all
    const r = results({})
    r.closedLoop[0]!.reference = undefined
    expect(byLabel(r)['pass-through: max req/s']!.pass).toBeNull()
  })

  test('memory: each phase and the batch run (saying which) at most 256 MiB; an older batch run without VmHWM is shown, not judged', () => {
    const r = results({})
    r.memory.phases = [
      { kind: 'closed loop', label: 'closed loop 60 s', reset: 'clear_refs', seconds: 60, done: 1, errors: 0, rssBeforeMiB: 90, rssAfterMiB: 120, hwmMiB: 256 },
      { kind: 'disconnects', label: '4,000 stream disconnects', reset: 'fresh process', seconds: 9, done: 4000, errors: 0, rssBeforeMiB: 90, rssAfterMiB: 120, hwmMiB: 256.5 },
    ]
    const batch = {
      date: '2026-11-23T17:21:19.915Z',
      setup: { items: 50000 },
      rss: { beforeMiB: 150, peakMiB: 230, growthMiB: 80, hwmMiB: 240 },
      exports: [
        { format: 'ndjson', rssBeforeMiB: 190, rssGrowthMiB: 20, hwmMiB: 212 },
        { format: 'zip', rssBeforeMiB: 190, rssGrowthMiB: 40, hwmMiB: 260 },
      ],
    } as unknown as BatchBench
    const v = byLabel(r, batch)
    expect(v['peak RSS (VmHWM) during the closed-loop run, chat pass-through, 64 connections']!.pass).toBe(true)
    expect(v['peak RSS (VmHWM) during the stream disconnects']!.pass).toBe(false)
    expect(v['peak RSS (VmHWM) during a 50,000-item batch']).toMatchObject({ value: 240, pass: true })
    expect(v['peak RSS (VmHWM) during a 50,000-item batch']!.gateway).toContain('batch.ts run of 2026-11-23 17:21 UTC')
    expect(v['peak RSS (VmHWM) during the batch exports']).toMatchObject({ value: 260, pass: false })
    expect(v['peak RSS (VmHWM) during the batch exports']!.gateway).toContain('zip')

    const older = { ...batch, rss: { beforeMiB: 150, peakMiB: 234.3, growthMiB: 80 }, exports: [{ format: 'zip', rssBeforeMiB: 190, rssGrowthMiB: 40 }] } as unknown as BatchBench
    const o = byLabel(r, older)
    expect(o['peak RSS (VmHWM) during a 50,000-item batch']).toMatchObject({ pass: null, value: null })
    expect(o['peak RSS (VmHWM) during a 50,000-item batch']!.gateway).toContain('sampled RSS peak 234.3 MiB')
    // no batch-results.json: not measured
    expect(byLabel(r)['peak RSS (VmHWM) during a 50,000-item batch']).toMatchObject({ pass: null, gateway: 'not measured' })
  })

  test('the reports lead with the targets table and carry the budget markers', () => {
    const r = results({})
    const md = markdownReport(r)
    expect(md.indexOf('Targets')).toBeGreaterThan(0)
    expect(md.indexOf('Targets')).toBeLessThan(md.indexOf('Earlier absolute targets'))
    expect(sectionOf(md, BUDGET)).toBeDefined()
    expect(md).toContain('| pass-through: max req/s | ≥ 60 % of bare chat | 9,000 req/s | 15,000 req/s | 60 % | PASS |')
    const text = textReport(r)
    expect(text).toContain('Targets')
    expect(text).toContain('gateway ÷ bare')
  })
})

describe('docs/bench.md: sections run.ts keeps', () => {
  const budget = `${BUDGET.start}\n## Per-request CPU budget\n\nparse 0.010 ms, auth 0.005 ms\n${BUDGET.end}`
  const batch = `${BATCH.start}\n## Batches\nfigures\n${BATCH.end}`

  test('a fresh report keeps the hand-written budget in its place and the batch section at the end', () => {
    const previous = `# Benchmark\nold tables\n\n${budget}\n\nmore old tables\n\n${batch}\n`
    const fresh = markdownReport(results({}))
    const out = keepSections(fresh, previous)
    expect(sectionOf(out, BUDGET)).toBe(budget)
    expect(sectionOf(out, BATCH)).toBe(batch)
    expect(out).not.toContain('old tables')
    expect(out).not.toContain('(Written by hand;')
    // the budget stays where the report puts it: after the targets table, before the detail
    expect(out.indexOf(BUDGET.start)).toBeGreaterThan(out.indexOf('Targets'))
    expect(out.indexOf(BUDGET.start)).toBeLessThan(out.indexOf('Open loop'))
    // rewriting again changes nothing
    expect(keepSections(fresh, out)).toBe(out)
  })

  test('without a previous file (or sections in it) the report is left as rendered', () => {
    const fresh = markdownReport(results({}))
    expect(keepSections(fresh, undefined)).toBe(fresh)
    expect(keepSections(fresh, '# Benchmark\nno markers')).toBe(fresh)
  })

  test('replaceSection swaps the marked text, or appends it when the document has none', () => {
    expect(replaceSection(`a\n${budget}\nb`, BUDGET, `${BUDGET.start}x${BUDGET.end}`)).toBe(`a\n${BUDGET.start}x${BUDGET.end}\nb`)
    expect(replaceSection('a\n\n', BUDGET, 'S')).toBe('a\n\nS\n')
    // an end marker before the start is no section
    expect(sectionOf(`${BUDGET.end} ${BUDGET.start}`, BUDGET)).toBeUndefined()
  })
})

describe('stream disconnects', () => {
  // a stream that would go on for a minute: the only way it ends early is the client leaving
  let opened = 0
  let cancelled = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      if (new URL(req.url).pathname === '/fail/chat/completions') return new Response('{"error":"no"}', { status: 503 })
      opened++
      let timer: ReturnType<typeof setInterval> | undefined
      return new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode('data: {"first":true}\n\n'))
            let n = 0
            timer = setInterval(() => (++n > 6000 ? (clearInterval(timer), c.close()) : c.enqueue(new TextEncoder().encode('data: {}\n\n'))), 10)
          },
          cancel() {
            clearInterval(timer)
            cancelled++
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      )
    },
  })
  afterAll(() => server.stop(true))
  const base = `http://127.0.0.1:${server.port}`

  test('each stream is opened, read to its first chunk and abandoned; the server sees every one go', async () => {
    const t0 = performance.now()
    const r = await disconnects([chatCall('a', base + '/ok', 'k', 'm', true), chatCall('b', base + '/ok2', 'k', 'm', true)], 120, 20)
    expect(r).toMatchObject({ started: 120, aborted: 120, errors: {} })
    // far sooner than one stream would take to finish (a minute)
    expect(performance.now() - t0).toBeLessThan(10_000)
    expect(opened).toBe(120)
    const deadline = Date.now() + 5000
    while (cancelled < 120 && Date.now() < deadline) await Bun.sleep(20)
    expect(cancelled).toBe(120)
  })

  test('a refused stream counts as an error by status, taking the calls in turn', async () => {
    const r = await disconnects([chatCall('ok', base + '/ok', 'k', 'm', true), chatCall('bad', base + '/fail', 'k', 'm', true)], 10, 3)
    expect(r).toMatchObject({ started: 10, aborted: 5, errors: { 'HTTP 503': 5 } })
  })
})

describe('a chatty child (the gateway with its access log on) never stalls on its stdout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-chatty-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('64 MiB of log lines after the listening line are drained while the child runs', async () => {
    const script = join(dir, 'chatty.ts')
    // far beyond a pipe's buffer (64 KiB): the child only exits if the reader keeps up
    writeFileSync(
      script,
      `console.log('chatty listening on http://127.0.0.1:1')
const line = Buffer.from('{"level":"info","msg":"request"}'.padEnd(255, ' ') + '\\n')
const block = Buffer.concat(Array.from({ length: 4096 }, () => line))
for (let i = 0; i < 64; i++) await new Promise((res) => process.stdout.write(block, res))
await Bun.write(${JSON.stringify(join(dir, 'done'))}, 'done')
setInterval(() => {}, 1000)
`,
    )
    const child = await spawnListening([process.execPath, script], { env: { PATH: process.env.PATH ?? '' }, cwd: dir })
    try {
      expect(child.url).toBe('http://127.0.0.1:1')
      const deadline = Date.now() + 20_000
      while (!(await Bun.file(join(dir, 'done')).exists()) && Date.now() < deadline) await Bun.sleep(50)
      expect(await Bun.file(join(dir, 'done')).exists()).toBe(true)
      // every line was read: the listening line and 64 × 4,096 log lines
      while (child.outputLines!() < 1 + 64 * 4096 && Date.now() < deadline) await Bun.sleep(20)
      expect(child.outputLines!()).toBe(1 + 64 * 4096)
    } finally {
      await child.stop()
    }
  }, 30_000)
})

describe('memory phases', () => {
  // the fake upstream stands in for the gateway: JSON chat for the closed loop, streams to abandon
  const upstream = startUpstream(0)
  afterAll(() => upstream.stop(true))
  const url = `http://127.0.0.1:${upstream.port}`
  const plan = { closedLoopS: 1, connections: 4, disconnects: 30, concurrency: 5, loadCore: 0 }
  const calls = {
    chat: (u: string) => chatCall('chat', u + '/v1', 'k', 'gpt-4o-mini'),
    streams: (u: string) => [chatCall('chat stream', u + '/v1', 'k', 'gpt-4o-mini', true), messagesCall('messages stream', u, 'k', 'claude-haiku-4-5', true)],
  }
  const self = { url, pid: process.pid, stop: async () => {} }

  test('each phase resets the peak, runs, and records its own VmHWM; every reading feeds the overall peak', async () => {
    const peaks: number[] = []
    const resets: number[] = []
    const { phases, gateway } = await memoryPhases(
      { gateway: self, fresh: () => Promise.reject(new Error('not needed')), ...calls, sawPeak: (m) => peaks.push(m), log: () => {}, reset: (pid) => (resets.push(pid), true) },
      plan,
    )
    expect(gateway).toBe(self)
    expect(resets).toEqual([process.pid, process.pid])
    expect(phases.map((p) => [p.kind, p.reset])).toEqual([
      ['closed loop', 'clear_refs'],
      ['disconnects', 'clear_refs'],
    ])
    expect(phases[0]!.done).toBeGreaterThan(0)
    expect(phases[1]).toMatchObject({ done: 30, errors: 0 })
    for (const p of phases) expect(p.hwmMiB).toBeGreaterThan(0)
    // one reading before each reset and one after each phase
    expect(peaks.length).toBe(4)
  }, 20_000)

  test('when the kernel refuses the reset, the phase runs on a fresh gateway instead', async () => {
    let fresh = 0
    const { phases, gateway } = await memoryPhases(
      {
        gateway: { ...self, url: 'http://127.0.0.1:1' },
        fresh: async () => (fresh++, self),
        ...calls,
        sawPeak: () => {},
        log: () => {},
        reset: () => false,
      },
      plan,
    )
    expect(fresh).toBe(2)
    expect(gateway).toBe(self)
    expect(phases.map((p) => p.reset)).toEqual(['fresh process', 'fresh process'])
    // the work went to the fresh gateway's address, not the old one
    expect(phases[1]).toMatchObject({ done: 30, errors: 0 })
  }, 20_000)
})

describe('the measured paths', () => {
  const paths = candidatePaths('http://gw', 'http://up', 'k', 'http://bare')
  const surfaceOf = (url: string) => (url.endsWith('/chat/completions') ? 'chat' : url.endsWith('/v1/messages') ? 'messages' : url.endsWith('/responses') ? 'responses' : '?')

  test('every path has the bare proxy on its own client surface, JSON and stream, as the targets assume', () => {
    expect(paths.map((p) => p.name).sort()).toEqual(PATHS.map((p) => p.path).sort())
    for (const p of paths) {
      const t = PATHS.find((x) => x.path === p.name)!
      expect([p.name, surfaceOf(p.gateway.url)]).toEqual([p.name, t.surface])
      expect([p.name, p.reference!.call.url.startsWith('http://bare/'), surfaceOf(p.reference!.call.url), surfaceOf(p.reference!.stream.url)]).toEqual([p.name, true, t.surface, t.surface])
      expect(p.reference!.stream.body).toContain('"stream":true')
    }
  })

  test('--only keeps the named paths and refuses a name it does not know', () => {
    expect(selected(paths, undefined)).toBe(paths)
    expect(selected(paths, 'pass-through, messages pass-through').map((p) => p.name)).toEqual(['pass-through', 'messages pass-through'])
    expect(() => selected(paths, 'pass-through,passthrough')).toThrow("no path named 'passthrough'")
  })
})

describe('alternating closed-loop rounds', () => {
  test('the median round is kept (the lower middle of an even count); none gives none', () => {
    const rounds = [{ rps: 9000 }, { rps: 7000 }, { rps: 8000 }]
    expect(medianBy(rounds, (r) => r.rps)).toBe(rounds[2])
    expect(medianBy([{ rps: 2 }, { rps: 1 }], (r) => r.rps)!.rps).toBe(1)
    expect(medianBy([], (r: { rps: number }) => r.rps)).toBeUndefined()
  })

  test('the closed-loop table shows the median with the rounds\' range', () => {
    const r = results({ gwRps: 8000, bareRps: 15000 })
    r.closedLoop[0]!.rounds = { gateway: [7000, 8000, 9000], reference: [15000, 14000, 16500] }
    const text = textReport(r)
    expect(text).toContain('alternating rounds: median (range)')
    expect(text).toContain('8,000 (7,000–9,000)')
    expect(text).toContain('15,000 (14,000–16,500)')
  })
})

describe('the budget: whose CPU a profile sample is', () => {
  const at = (file: string) => `file:///checkout/src/${file}`

  test('a statement counts for the store that runs it through the SQL seam, not for the seam', () => {
    // innermost first: bun:sqlite's native call, the seam, then whoever wrote the statement
    expect(categoryOf(['', 'bun:sqlite', at('db/sqlite-sql.ts'), at('db/sqlite-sql.ts'), at('surfaces/responses/thread.ts'), at('db/sqlite-sql.ts')])).toBe('responses threads (SQLite)')
    expect(categoryOf(['bun:sqlite', at('db/sqlite-sql.ts'), at('generations/store.ts'), at('generations/recorder.ts')])).toBe('recording (records, rollup, SQLite)')
  })

  test('what the seam runs with no store on the stack is a row of its own; anything else keeps its file', () => {
    expect(categoryOf(['bun:sqlite', at('db/sqlite-sql.ts')])).toBe(TRANSACTIONS)
    expect(categoryOf(['', at('http/log.ts'), at('pipeline/run.ts')])).toBe('access log')
    expect(categoryOf(['', 'node:stream'])).toBe('unattributed native')
    expect(categoryOf([at('somewhere/new.ts')])).toBe('other JavaScript')
  })
})
