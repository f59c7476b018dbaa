// A gateway relays long streams: each holds its upstream connection for as long as it runs.
// Bun's fetch client would hold the 257th call back until one of the first 256 ended, so
// `serve` starts with the fetch limit raised when `server.max_upstream_connections` is set.
// The client side here is raw TCP: the test process's own fetch keeps Bun's default limit.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
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
  g = await spawnGateway({ env: { ...NO_LIMITS, SWITCHYARD_MAX_UPSTREAM_CONNECTIONS: '10000', SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-fetchlimit-0123456789abcdef', OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: `${up.url}/v1` } })
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

test('serve runs with the fetch limit in its environment, in the same process, with no signal blocked', async () => {
  const environ = readFileSync(`/proc/${g.proc.pid}/environ`, 'latin1').split('\0')
  expect(environ).toContain('BUN_CONFIG_MAX_HTTP_REQUESTS=10000')
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
