// The cluster bench's section of docs/bench.md: its figures are rewritten by each run, the
// account written around them stays, and run.ts keeps the whole section when it rewrites the file.
import { describe, expect, test } from 'bun:test'
import { clusterSection, figuresMarkdown, type ClusterBench, type Figures } from '../../scripts/bench/cluster-report.ts'
import { CLUSTER, keepSections, sectionOf } from '../../scripts/bench/sections.ts'

const figures = (rps: number, cpu: number, p50: number): Figures => ({ rps, cpuUsAtSaturation: cpu, coreBusy: 0.99, redisCpuUsAtSaturation: 0, pgCpuUsAtSaturation: 0, cpuUsAtRate: cpu * 2, p50Ms: p50, p99Ms: p50 * 4, errors: 0, otherCores: 0 })

const bench = (cluster: Figures): ClusterBench => ({
  date: '2026-11-25T12:00:00.000Z',
  machine: { nproc: 2, cpuModel: 'test cpu', kernel: 'Linux', bun: '1.x' },
  loadAvg: { before: '0.10 0.20 0.30 1/100 1', after: '0.40 0.50 0.60 1/100 1' },
  tool: 'wrk',
  rounds: 3,
  phase: { openMs: 8000, closedS: 8, warmS: 2 },
  connections: 64,
  rate: 1000,
  stores: ['PostgreSQL', 'Redis'],
  notes: [],
  embedded: figures(17_000, 56, 1.0),
  cluster,
  rows: { embedded: [figures(17_000, 56, 1.0)], cluster: [cluster] },
})

describe('docs/bench.md: the Cluster mode section', () => {
  test('the verdicts: req/s ratio, CPU a request and p50 against embedded', () => {
    const pass = figuresMarkdown(bench(figures(15_000, 64, 1.2)))
    expect(pass).toContain('| 88 % | ≥ 85 % | PASS |')
    expect(pass).toContain('| +8.0 µs | ≤ +10 µs | PASS |')
    expect(pass).toContain('| +0.20 ms | ≤ +0.3 ms | PASS |')
    expect(pass).toContain('load average 0.10 0.20 0.30 before')
    const miss = figuresMarkdown(bench(figures(11_300, 81, 2.6)))
    expect(miss).toContain('| 66 % | ≥ 85 % | MISS |')
    expect(miss).toContain('| +25.0 µs | ≤ +10 µs | MISS |')
    expect(miss).toContain('| +1.60 ms | ≤ +0.3 ms | MISS |')
    // a funded key's rows follow the unlimited key's, with the same targets
    const both = figuresMarkdown({ ...bench(figures(15_000, 64, 1.2)), funded: { embedded: figures(16_000, 60, 1.0), cluster: figures(12_000, 90, 1.5) } })
    expect(both).toContain('| unlimited key: max req/s | 17,000 | 15,000 | 88 % | ≥ 85 % | PASS |')
    expect(both).toContain('| funded key: max req/s | 16,000 | 12,000 | 75 % | ≥ 85 % | MISS |')
    expect(both).toContain('| funded key: gateway CPU a request at max req/s | 60.0 µs | 90.0 µs | +30.0 µs | ≤ +10 µs | MISS |')
  })

  test('appended when missing; later runs replace the figures and keep the account around them', () => {
    const first = clusterSection('# Benchmark\n', bench(figures(11_300, 81, 2.6)))
    expect(sectionOf(first, CLUSTER)).toContain('## Cluster mode')
    const edited = first.replace('## Cluster mode\n', '## Cluster mode\n\nWhat was tried, by hand.\n')
    const second = clusterSection(edited, bench(figures(15_000, 64, 1.2)))
    expect(second).toContain('What was tried, by hand.')
    expect(second).toContain('15,000')
    expect(second).not.toContain('11,300')
    // run.ts's rewrite of the file carries the section over as it is
    expect(sectionOf(keepSections('# Benchmark\nfresh report\n', second), CLUSTER)).toBe(sectionOf(second, CLUSTER))
  })
})
