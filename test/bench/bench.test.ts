// The bench's pure parts and its fake upstream: the figures are only as good as these.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import OpenAI from 'openai'
import { parseWrk } from '../../scripts/bench/closedloop.ts'
import { paced } from '../../scripts/bench/openloop.ts'
import type { Results } from '../../scripts/bench/results.ts'
import { added, percentile, summarize } from '../../scripts/bench/stats.ts'
import { earlierVerdicts as verdicts } from '../../scripts/bench/targets-earlier.ts'
import { spawnUpstream } from '../../scripts/bench/processes.ts'
import { startUpstream } from '../../scripts/bench/upstream.ts'
import { stamp, stampsIn, STREAM_CHUNKS } from '../../scripts/bench/wire.ts'

describe('stats', () => {
  test('nearest-rank percentiles', () => {
    const s = Float64Array.from({ length: 100 }, (_, i) => i + 1)
    expect(percentile(s, 50)).toBe(50)
    expect(percentile(s, 99)).toBe(99)
    expect(percentile(s, 100)).toBe(100)
    expect(percentile(new Float64Array(0), 50)).toBeNaN()
  })

  test('summarize sorts numerically and added subtracts figure by figure', () => {
    const g = summarize([10, 2, 1, 30])
    expect(g).toMatchObject({ n: 4, p50: 2, max: 30, mean: 10.75 })
    const d = added(g, summarize([1, 1, 1, 1]))
    expect(d.p50).toBe(1)
    expect(d.max).toBe(29)
  })
})

describe('wrk output', () => {
  test('requests, rate and every kind of error are read', () => {
    const out = `Running 5s test @ http://127.0.0.1:1/x
  1 threads and 64 connections
  52345 requests in 5.00s, 30.1MB read
  Socket errors: connect 0, read 2, write 1, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  10468.12
Transfer/sec:      6.02MB`
    expect(parseWrk(out)).toEqual({ requests: 52345, rps: 10468.12, errors: 13 })
  })
})

describe('open-loop schedule', () => {
  test('fires at the rate, never before the scheduled time, and waits for completions', async () => {
    const early: number[] = []
    let done = 0
    const lags = await paced(500, 200, async (scheduled) => {
      early.push(scheduled - performance.now())
      await Bun.sleep(5)
      done++
    })
    expect(lags.length).toBe(100)
    expect(done).toBe(100)
    expect(Math.max(...early)).toBeLessThanOrEqual(0)
  })
})

describe('stream stamps', () => {
  test('round trip, including when split across reads', () => {
    const text = `a${stamp(1712345678901.25)}b${stamp(1712345678905.5)}`
    expect(stampsIn(text)).toEqual([1712345678901.25, 1712345678905.5])
    expect(stampsIn(text.slice(0, text.length - 3))).toEqual([1712345678901.25])
  })
})

describe('earlier absolute targets', () => {
  const base = { openLoop: [], closedLoop: [], streams: [] } as unknown as Results
  test('a missing figure is not measured, not a pass', () => {
    expect(verdicts(base).every((v) => v.pass === null && v.measured === null)).toBe(true)
  })
  test('bounds are applied in the right direction', () => {
    const r = {
      ...base,
      openLoop: [{ path: 'pass-through', rate: 1000, added: { p50: 0.5, p99: 1.0 } }],
      closedLoop: [{ path: 'pass-through', gateway: { rps: 9000 } }, { path: 'translated', gateway: { rps: 3000 } }],
    } as unknown as Results
    const v = Object.fromEntries(verdicts(r).map((x) => [x.label, x.pass]))
    expect(v['pass-through: added latency p50 at 1,000 req/s']).toBe(false)
    expect(v['pass-through: added latency p99 at 1,000 req/s']).toBe(true)
    expect(v['pass-through: max req/s, gateway on one core']).toBe(true)
    expect(v['translated (Claude via chat): max req/s, one core']).toBe(false)
  })
  test('the messages paths are held to the chat pass-through targets, each from its own rows', () => {
    const r = {
      ...base,
      openLoop: [
        { path: 'messages pass-through', rate: 1000, added: { p50: 0.3 } },
        { path: 'messages pass-through', rate: 200, added: { p50: 9 } },
        { path: 'messages translated', rate: 1000, added: { p50: 0.5 } },
      ],
      closedLoop: [{ path: 'messages pass-through', gateway: { rps: 7999 } }, { path: 'messages translated', gateway: { rps: 8000 } }],
      streams: [{ path: 'messages pass-through', added: { ttfb: { p50: 0.5 } } }, { path: 'messages translated', added: { ttfb: { p50: 0.51 } } }],
    } as unknown as Results
    const v = Object.fromEntries(verdicts(r).map((x) => [x.label, x]))
    const pass = (label: string) => v[label]!.pass
    expect(v['messages pass-through: added latency p50 at 1,000 req/s']).toMatchObject({ measured: 0.3, pass: true, target: '≤ +0.45 ms' })
    expect(pass('messages pass-through: max req/s, gateway on one core')).toBe(false)
    expect(pass('messages pass-through stream: added first byte p50')).toBe(true)
    expect(pass('messages translated: added latency p50 at 1,000 req/s')).toBe(false)
    expect(v['messages translated: max req/s, gateway on one core']).toMatchObject({ measured: 8000, pass: true, target: '≥ 8,000 req/s' })
    expect(pass('messages translated stream: added first byte p50')).toBe(false)
    // the chat rows are not read for the messages targets, nor the other way round
    expect(pass('pass-through: added latency p50 at 1,000 req/s')).toBeNull()
  })
})

describe('fake upstream speaks both wires (checked with the official SDKs)', () => {
  const server = startUpstream(0)
  const base = `http://127.0.0.1:${server.port}`
  afterAll(() => server.stop(true))

  test('OpenAI chat: JSON and a stamped stream with usage', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: base + '/v1' })
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    expect(r.choices[0]!.finish_reason).toBe('stop')
    expect(r.usage?.total_tokens).toBe(21)
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
    let text = ''
    let usage = 0
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      usage = chunk.usage?.total_tokens ?? usage
    }
    const stamps = stampsIn(text)
    expect(stamps.length).toBe(STREAM_CHUNKS)
    // sent a few ms apart, not all at once
    expect(stamps.at(-1)! - stamps[0]!).toBeGreaterThan(STREAM_CHUNKS - 2)
    expect(usage).toBe(21)
  })

  test('Anthropic messages: JSON and a stamped stream', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: base })
    const m = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
    expect(m.stop_reason).toBe('end_turn')
    const final = await client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
    const text = final.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    expect(stampsIn(text).length).toBe(STREAM_CHUNKS)
    expect(final.usage.output_tokens).toBe(9)
  })

  test('refuses a request without credentials, as a real upstream would', async () => {
    const res = await fetch(base + '/v1/chat/completions', { method: 'POST', body: '{"model":"x"}' })
    expect(res.status).toBe(401)
  })
})

describe('the bare Elysia proxy (the reference floor) relays both wires', () => {
  const upstream = startUpstream(0)
  let proxy: Bun.Subprocess<'ignore', 'pipe', 'inherit'> | undefined
  afterAll(() => {
    proxy?.kill()
    upstream.stop(true)
  })

  test('messages JSON and stream through /api/beta/v1/messages, as the messages pass-through path is measured', async () => {
    proxy = Bun.spawn([process.execPath, join(import.meta.dir, '../../scripts/bench/bare-proxy.ts')], {
      env: { PATH: process.env.PATH ?? '', UPSTREAM: `http://127.0.0.1:${upstream.port}` },
      stdout: 'pipe',
      stderr: 'inherit',
    })
    let out = ''
    const reader = proxy.stdout.getReader()
    while (!/listening on (http:\S+)/.test(out)) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`bare proxy did not start: ${out}`)
      out += new TextDecoder().decode(value)
    }
    const url = /listening on (http:\S+)/.exec(out)![1]!
    const client = new Anthropic({ apiKey: 'sk-sy-test', baseURL: url + '/api/beta' })
    const m = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
    expect(m.stop_reason).toBe('end_turn')
    const final = await client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()
    expect(stampsIn(final.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).length).toBe(STREAM_CHUNKS)
    // and the chat route it had before
    const chat = await new OpenAI({ apiKey: 'sk-sy-test', baseURL: url + '/api/alpha/v1' }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    expect(chat.choices[0]!.finish_reason).toBe('stop')
  })
})

describe('fake upstream ids', () => {
  test('sequential by default; random with BENCH_IDS=random, as real upstreams give them (experiments/ids.ts)', async () => {
    const ids = async (env: Record<string, string>) => {
      const up = await spawnUpstream(0, env)
      try {
        const client = new OpenAI({ apiKey: 'sk-test', baseURL: up.url + '/v1' })
        const out: string[] = []
        for (let i = 0; i < 3; i++) out.push((await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).id)
        return out
      } finally {
        await up.stop()
      }
    }
    const seq = await ids({})
    expect([...seq].sort()).toEqual(seq)
    expect(seq[1]!.slice(0, -1)).toBe(seq[0]!.slice(0, -1))
    const random = await ids({ BENCH_IDS: 'random' })
    expect(new Set(random).size).toBe(3)
    for (const id of random) expect(id).toMatch(/^chatcmpl-bench[0-9a-f]{24}$/)
    // random ids share no running counter: they differ before their last character
    expect(random[1]!.slice(0, -1)).not.toBe(random[0]!.slice(0, -1))
  })
})
