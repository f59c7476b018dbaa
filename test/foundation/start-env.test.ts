// A gateway relays long streams: each holds its upstream connection for as long as it runs.
// Bun's fetch client would hold the 257th call back until one of the first 256 ended, so
// `serve` starts with the fetch limit raised (10,000 unless `server.max_upstream_connections`
// says otherwise). Past the limit, calls queue in the client, and the gateway shows it.
// The client side here is raw TCP: the test process's own fetch keeps Bun's default limit.
// The same re-execution turns off the heap's warm-up thread, which on a gateway's core only costs
// CPU, unless the environment says otherwise.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { NO_LIMITS } from '../batches/helpers.ts'
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, type Spawned } from '../helpers/server.ts'

const CALLS = 300
let up: FakeUpstream
let g: Spawned
let open = 0
let peak = 0
let release!: () => void
const released = new Promise<void>((r) => (release = r))

beforeAll(async () => {
  up = await startFakeUpstream()
  up.script(async () => {
    open++
    peak = Math.max(peak, open)
    await released
    open--
    return { json: fixtureJson('openai/chat/nonstream-text.json') }
  })
  g = await spawnGateway({ env: { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-fetchlimit-0123456789abcdef', OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: `${up.url}/v1` } })
})

afterAll(async () => {
  release()
  g?.kill()
  await g?.exited
  await up?.stop()
  cleanup(g.dataDir)
})

/** One HTTP/1.1 request over its own socket; resolves with the status code. */
function rawChat(url: string, key: string): Promise<number> {
  const { hostname, port } = new URL(url)
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname)
    let got = ''
    s.on('connect', () =>
      s.write(
        `POST /api/alpha/v1/chat/completions HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      ),
    )
    s.on('data', (d) => (got += d.toString()))
    s.on('error', reject)
    s.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)))
  })
}

const environOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')
/** The names of a process's threads (one that ends while they are read is left out). */
const threadsOf = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).map((t) => {
    try {
      return readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim()
    } catch {
      return ''
    }
  })

test('serve runs by default with the fetch limit raised in its environment, in the same process, with no signal blocked', async () => {
  const environ = environOf(g.proc.pid)
  expect(environ).toContain('BUN_CONFIG_MAX_HTTP_REQUESTS=10000')
  expect(environ).toContain('BUN_JSC_useWarmUpMarkedBlocks=0')
  // and it runs as a fresh process does: no signal blocked. Bun blocks every signal for a
  // moment while it starts a thread, so one reading may catch that; a mask inherited through
  // the re-execution would stay, and every reading for two seconds would show it.
  const blocked = () => /^SigBlk:\s+(\S+)$/m.exec(readFileSync(`/proc/${g.proc.pid}/status`, 'utf8'))?.[1] ?? '?'
  let mask = blocked()
  for (const until = Date.now() + 2_000; !/^0+$/.test(mask) && Date.now() < until; mask = blocked()) await Bun.sleep(20)
  expect(mask).toMatch(/^0+$/)
})

test('more than 256 concurrent upstream calls all reach the upstream at once', async () => {
  const replies = Array.from({ length: CALLS }, () => rawChat(g.url, g.key!))
  for (const until = Date.now() + 15_000; peak < CALLS && Date.now() < until; ) await Bun.sleep(50)
  expect(peak).toBe(CALLS)
  release()
  const statuses = await Promise.all(replies)
  expect(statuses.filter((s) => s === 200).length).toBe(CALLS)
}, 30_000)

test('past a configured limit, calls wait in the client and the gateway says so: gauges, a counter and one warning', async () => {
  let held = 0
  let free!: () => void
  const freed = new Promise<void>((r) => (free = r))
  const small = await startFakeUpstream()
  small.script(async () => {
    held++
    await freed
    return { json: fixtureJson('openai/chat/nonstream-text.json') }
  })
  const key = 'sk-sy-fetchqueue-0123456789abcdef'
  const admin = 'admin-fetchqueue-0123456789'
  const q = await spawnGateway({
    env: { ...NO_LIMITS, SWITCHYARD_MAX_UPSTREAM_CONNECTIONS: '20', SWITCHYARD_ADMIN_TOKEN: admin, SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: `${small.url}/v1` },
  })
  try {
    const environ = readFileSync(`/proc/${q.proc.pid}/environ`, 'latin1').split('\0')
    expect(environ).toContain('BUN_CONFIG_MAX_HTTP_REQUESTS=20')
    const replies = Array.from({ length: 30 }, () => rawChat(q.url, key))
    for (const until = Date.now() + 10_000; held < 20 && Date.now() < until; ) await Bun.sleep(20)
    await Bun.sleep(300)
    // the client holds the rest back: the upstream sees only the limit
    expect(held).toBe(20)
    const metric = async (name: string) => {
      const text = await (await fetch(`${q.url}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text()
      return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
    }
    expect(await metric('switchyard_upstream_in_flight')).toBe(30)
    expect(await metric('switchyard_upstream_queued')).toBe(10)
    expect(await metric('switchyard_upstream_queued_calls_total')).toBe(10)
    const log = await q.waitForOutput('upstream calls are queueing', 5_000)
    expect(log.split('upstream calls are queueing').length - 1).toBe(1)
    free()
    const statuses = await Promise.all(replies)
    expect(statuses.every((s) => s === 200)).toBe(true)
    for (const until = Date.now() + 5_000; (await metric('switchyard_upstream_in_flight')) !== 0 && Date.now() < until; ) await Bun.sleep(50)
    expect(await metric('switchyard_upstream_in_flight')).toBe(0)
    expect(await metric('switchyard_upstream_queued')).toBe(0)
  } finally {
    free()
    q.kill()
    await q.exited
    await small.stop()
    cleanup(q.dataDir)
  }
}, 40_000)

test("the heap's warm-up thread is off by default, also when the fetch limit was set before start; a setting of the environment's own is kept", async () => {
  // where the setting is on the thread is there from the start; where it is off, no load brings it
  const busy = async (x: Spawned, key: string) => {
    for (let i = 0; i < 10; i++) expect(await Promise.all(Array.from({ length: 20 }, () => rawChat(x.url, key)))).toEqual(Array(20).fill(200))
  }
  expect(threadsOf(g.proc.pid)).not.toContain('JSCWarmUp')
  const key = 'sk-sy-warmup-0123456789abcdef'
  for (const [env, want] of [
    [{ BUN_CONFIG_MAX_HTTP_REQUESTS: '10000' }, '0'],
    [{ BUN_JSC_useWarmUpMarkedBlocks: '1' }, '1'],
  ] as const) {
    const w = await spawnGateway({ env: { ...NO_LIMITS, ...env, SWITCHYARD_BOOTSTRAP_KEY: key } })
    try {
      const environ = environOf(w.proc.pid)
      expect(environ).toContain('BUN_CONFIG_MAX_HTTP_REQUESTS=10000')
      expect(environ).toContain(`BUN_JSC_useWarmUpMarkedBlocks=${want}`)
      await busy(w, key)
      expect(threadsOf(w.proc.pid).includes('JSCWarmUp')).toBe(want === '1')
    } finally {
      w.kill()
      await w.exited
      cleanup(w.dataDir)
    }
  }
}, 40_000)
