// The registry's text: both formats, escaping, cumulative buckets; and the bounds on labels, so
// that no client can grow the series (a random model id counts as `other`).
import { describe, expect, test } from 'bun:test'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
import type { Sql } from '../../src/db/sql.ts'
import type { GenerationInput } from '../../src/generations/types.ts'
import type { ApiKey } from '../../src/http/context.ts'
import { formatFor, render } from '../../src/metrics/exposition.ts'
import { GatewayMetrics } from '../../src/metrics/gateway.ts'
import { LabelSet, OTHER } from '../../src/metrics/labels.ts'
import { Registry } from '../../src/metrics/registry.ts'
import type { RequestContext } from '../../src/pipeline/context.ts'
import { MemoryHealth } from '../../src/routing/health.ts'
import { byLabels, parseMetrics, total } from './parse.ts'

describe('exposition', () => {
  const registry = () => {
    const r = new Registry()
    r.counter('x_requests', 'Requests "of" x\\ and\nmore', ['path']).cell(['a"b\\c\nd']).value = 3
    r.gauge('x_open', 'Open now').cell().value = 2
    const h = r.histogram('x_seconds', 'Durations', ['op'], [0.5, 1, 2.5])
    const c = h.cell(['get'])
    for (const v of [0.1, 0.5, 0.7, 3, 10]) h.observe(c, v)
    return r
  }

  test('the Prometheus text format: a counter named with _total, escaped labels and help, cumulative buckets', () => {
    expect(render(registry().families, 'prometheus')).toBe(
      [
        '# HELP x_requests_total Requests "of" x\\\\ and\\nmore',
        '# TYPE x_requests_total counter',
        'x_requests_total{path="a\\"b\\\\c\\nd"} 3',
        '# HELP x_open Open now',
        '# TYPE x_open gauge',
        'x_open 2',
        '# HELP x_seconds Durations',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{op="get",le="0.5"} 2',
        'x_seconds_bucket{op="get",le="1.0"} 3',
        'x_seconds_bucket{op="get",le="2.5"} 3',
        'x_seconds_bucket{op="get",le="+Inf"} 5',
        'x_seconds_sum{op="get"} 14.3',
        'x_seconds_count{op="get"} 5',
        '',
      ].join('\n'),
    )
  })

  test('OpenMetrics: the counter family without _total, its samples with it, and # EOF last', () => {
    const text = render(registry().families, 'openmetrics')
    expect(text).toContain('# HELP x_requests Requests')
    expect(text.split('\n').filter((l) => l.startsWith('# TYPE'))).toEqual(['# TYPE x_requests counter', '# TYPE x_open gauge', '# TYPE x_seconds histogram'])
    expect(text).toContain('\nx_requests_total{path=')
    expect(text.endsWith('\n# EOF\n')).toBe(true)
    expect(parseMetrics(text.replace('# EOF\n', ''))).toEqual(parseMetrics(render(registry().families, 'prometheus')))
  })

  test('the format follows Accept', () => {
    expect(formatFor(null)).toBe('prometheus')
    expect(formatFor('*/*')).toBe('prometheus')
    expect(formatFor('text/plain;version=0.0.4')).toBe('prometheus')
    expect(formatFor('application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5')).toBe('openmetrics')
  })

  test('a label set knows its values; anything else is other', () => {
    const s = new LabelSet(['a', 'b', 'a', OTHER])
    expect(s.values).toEqual([OTHER, 'a', 'b'])
    expect([s.indexOf('b'), s.indexOf('zzz'), s.indexOf(undefined)]).toEqual([2, 0, 0])
  })
})

describe('bounded series', () => {
  const config = loadConfig({ flags: { port: '0', 'data-dir': '/tmp/unused' }, env: {} })
  const catalog = buildCatalog(config)
  const down: Sql = { dialect: 'sqlite', all: () => Promise.reject(new Error('down')), get: () => Promise.reject(new Error('down')), run: () => Promise.reject(new Error('down')), tx: () => Promise.reject(new Error('down')) }
  const key = { id: 'key_1', account: 'acme' } as ApiKey
  const record = (model: string, httpStatus: number): GenerationInput => ({
    id: 'x',
    apiKey: key,
    endpoint: 'openai.chat.completions',
    stream: false,
    model: catalog.resolve(model)!,
    createdAt: Date.now(),
    usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
    finishReason: 'stop',
    latencyMs: 120,
    ttftMs: null,
    httpStatus,
    provider: 'mock',
  })

  test('a thousand random model ids make one `other` series; an unknown status is other too', async () => {
    const m = new GatewayMetrics({ config, catalog, health: new MemoryHealth(), sql: down })
    const rc = { apiKey: key } as RequestContext
    for (let i = 0; i < 1000; i++) {
      const id = `mock-${crypto.randomUUID()}`
      m.observer.begin({ surface: 'chat', model: catalog.resolve(id)!, stream: false, rc }).end(record(id, 200))
    }
    m.observer.begin({ surface: 'chat', model: catalog.resolve('mock-gpt')!, stream: false, rc }).end(record('mock-gpt', 200))
    m.observer.begin({ surface: 'chat', model: catalog.resolve('mock-gpt')!, stream: false, rc }).end(record('mock-gpt', 1234))
    const s = parseMetrics(await m.scrape('prometheus'))
    expect(byLabels(s, 'switchyard_requests_total', ['model', 'status'])).toEqual({ 'model=other,status=200': 1000, 'model=mock-gpt,status=200': 1, 'model=mock-gpt,status=other': 1 })
    expect(total(s, 'switchyard_tokens_total', { model: 'other', type: 'input' })).toBe(10_000)
    // without per_key, no key id or account
    expect(s.some((x) => 'key_id' in x.labels || 'account' in x.labels)).toBe(false)
    // a database that cannot answer shows no batch figures rather than stale ones
    expect(s.some((x) => x.name === 'switchyard_batches')).toBe(false)
    m.close()
  })
})
