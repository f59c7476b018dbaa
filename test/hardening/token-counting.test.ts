// Token counting is linear and never holds the event loop for long. A 1 MB one-word
// prompt used to stall every request for tens of seconds (BPE over one enormous piece).
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { countBounded, countBoundedAsync, segments, tokenizer } from '../../src/ir/bounded-bpe.ts'
import { countTokens } from '../../src/ir/tokens.ts'
import { countTokensAsync as countInWorker } from '../../src/tokens/count.ts'
import { cleanup, ROOT, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

const procs: Spawned[] = []
const dirs: string[] = []
afterAll(() => {
  for (const p of procs) p.kill('SIGKILL')
  for (const d of dirs) cleanup(d)
})

/** Letters from a fixed generator: the slow case of BPE, and no two runs alike (no cache hits). */
function letters(n: number, seed = 7): string {
  let x = seed
  const out = new Array<string>(n)
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    out[i] = String.fromCharCode(97 + ((x >>> 16) % 26))
  }
  return out.join('')
}

describe('counting', () => {
  test('ordinary text counts exactly as one encode() of the whole (prose, code, JSON, SSE)', () => {
    const { encode } = tokenizer()
    for (const f of ['README.md', 'package-lock.json', 'src/pipeline/relay.ts', 'test/fixtures/openai/chat/stream-text-vercel.sse', 'test/fixtures/anthropic/messages/stream-thinking.sse']) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      expect(countBounded(text, { exact: Infinity })).toBe(encode(text).length)
    }
  })

  test('segments never exceed the run cap inside one enormous word, and rejoin to the text', () => {
    const text = 'mock: text ok\n' + letters(10_000)
    const segs = [...segments(text)]
    expect(segs.join('')).toBe(text)
    expect(Math.max(...segs.map((s) => s.length))).toBeLessThanOrEqual(2048 + 256)
  })

  test('a 1 MB one-word prompt: the sync count is bounded (estimated past its budget), the async one is close to exact', async () => {
    const text = letters(1 << 20)
    const t0 = performance.now()
    const sync = countBounded(text)
    expect(performance.now() - t0).toBeLessThan(100)
    const exact = await countBoundedAsync(text, { exact: Infinity, slice: 2_000 })
    expect(Math.abs(sync - exact) / exact).toBeLessThan(0.05)
  })

  test("the bounded count in slices (the worker's fallback) gives the loop back while counting 1 MB of one word, and agrees with the token worker", async () => {
    const text = 'mock: text ok\n' + letters(1 << 20, 3)
    // the whole count holds the thread about 30 ms: counted in one piece, a 1 ms timer gets no
    // turn during it; in slices it gets dozens (counted, not timed: a pause of the machine
    // lengthens one gap but never takes the turns away)
    let turns = 0
    const timer = setInterval(() => turns++, 1)
    const counted = await countBoundedAsync(text)
    clearInterval(timer)
    expect(turns).toBeGreaterThanOrEqual(10)
    expect(counted).toBe(await countInWorker(text))
    // ordinary text stays exact on every path, the sync one within its budget (a twentieth of a
    // unit a character of prose: 80,000 characters), which the whole README has outgrown
    const prose = readFileSync(join(ROOT, 'README.md'), 'utf8').slice(0, 60_000)
    const exact = tokenizer().encode(prose).length
    expect(countTokens(prose)).toBe(exact)
    expect(await countBoundedAsync(prose)).toBe(exact)
    expect(await countInWorker(prose)).toBe(exact)
  })
})

describe('the gateway stays responsive', () => {
  test('/health p99 < 500 ms while 10 clients each send a 1 MB one-word prompt; a 30 MB prompt is answered within 5 s; SIGTERM still exits in its grace period', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const key = 'sk-sy-d1-bootstrap-0123456789abcdef'
    const gw = await spawnGateway({ dataDir: dir, env: { SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_KEY_BURST_RPS: '1000' } })
    procs.push(gw)
    const bodyOf = (content: string, stream = false) => JSON.stringify({ model: 'mock-gpt', stream, messages: [{ role: 'user', content }] })
    const post = (body: string) =>
      fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body })
    const ask = (content: string, stream = false) => post(bodyOf(content, stream))
    // Built before the probe starts: this process's own work must not be measured as the gateway's.
    const bodies = Array.from({ length: 10 }, (_, i) => bodyOf('mock: text ok\n' + (i % 2 ? 'a'.repeat(1 << 20) : letters(1 << 20, i + 1)), i % 3 === 0))

    // /health is probed from a process of its own while the prompts are answered
    const probe = Bun.spawn([process.execPath, join(ROOT, 'test/helpers/probe.ts'), `${gw.url}/health`, '1500', '10'], { stdout: 'pipe' })
    await Bun.sleep(100)
    const answers = await Promise.all(bodies.map((b) => post(b).then(async (r) => ({ status: r.status, text: await r.text() }))))
    for (const a of answers) {
      expect(a.status).toBe(200)
      expect(a.text.includes('"content":"ok"') || a.text.endsWith('data: [DONE]\n\n')).toBe(true)
    }
    const health = (JSON.parse(await new Response(probe.stdout).text()) as number[]).sort((a, b) => a - b)
    const p99 = health[Math.min(health.length - 1, Math.floor(health.length * 0.99))]!
    expect(health.length).toBeGreaterThan(20)
    // The stall this guards against lasted seconds. What is left is the machine's: the ten
    // prompts allocate some 40 MB at once, and on a shared 2-core VM the collections and page
    // faults that costs put one or two answers of a run past 50 ms (51 and 75 ms in a CI run of
    // 2026-12-02; 18-36 ms on a quiet minute), and on a machine busy with other work up to 274 ms
    // (2026-12-05): the bound is set well under the stall, not at a quiet machine's figure.
    expect(p99).toBeLessThan(500)

    // 30 MB: answered (or refused) within 5 s
    const t0 = performance.now()
    const big = await ask('mock: text big\n' + 'b'.repeat(30 * 1024 * 1024))
    expect([200, 413]).toContain(big.status)
    await big.text()
    expect(performance.now() - t0).toBeLessThan(5000)

    // SIGTERM while a huge prompt is in flight: the gateway still exits within its grace period
    const inflight = ask('mock: text late\n' + letters(4 << 20, 99)).catch(() => null)
    await Bun.sleep(100)
    const s0 = performance.now()
    gw.kill('SIGTERM')
    expect(await gw.exited).toBe(0)
    // the default grace period is 10 s; the loop is free, so it does not even take that
    expect(performance.now() - s0).toBeLessThan(10_000)
    await inflight
  }, 60_000)
})

describe('background threads yield the CPU', () => {
  // Linux keeps a niceness per thread: the token workers run at nice 10, the request thread as started
  test.skipIf(process.platform !== 'linux')('the token workers run below the request thread', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const key = 'sk-sy-nice-bootstrap-0123456789abcdef'
    const gw = await spawnGateway({ dataDir: dir, env: { SWITCHYARD_BOOTSTRAP_KEY: key } })
    procs.push(gw)
    // a large text starts the token workers it needs
    const res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text ok\n' + letters(256 * 1024, 7) }] }),
    })
    expect(res.status).toBe(200)
    await res.text()
    const nice = (tid: string) => {
      const stat = readFileSync(`/proc/${gw.proc.pid}/task/${tid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
    }
    const threads = readdirSync(`/proc/${gw.proc.pid}/task`)
    expect(nice(String(gw.proc.pid))).toBe(0)
    expect(threads.filter((t) => nice(t) === 10).length).toBeGreaterThanOrEqual(1)
  }, 30_000)
})

