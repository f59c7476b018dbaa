// Process-level behaviour: the access log, and graceful shutdown with a request in flight.
import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fixture, startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, type Spawned } from '../helpers/server.ts'

const procs: Spawned[] = []
afterAll(() => {
  for (const p of procs) {
    p.kill('SIGKILL')
    cleanup(p.dataDir)
  }
})

test('one JSON line per request on stdout, with no key and no body in it', async () => {
  const key = 'sk-sy-logtest-' + crypto.randomUUID()
  const gw = await spawnGateway({ env: { SWITCHYARD_BOOTSTRAP_KEY: key } })
  procs.push(gw)
  await fetch(gw.url + '/api/v1/models', { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'log-req-1' } })
  await fetch(gw.url + '/api/v1/models', { headers: { authorization: 'Bearer sk-sy-wrong-secret' } })
  gw.kill('SIGTERM')
  expect(await gw.exited).toBe(0)
  const lines = gw
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'request')
  expect(lines).toHaveLength(2)
  expect(lines[0]).toMatchObject({ request_id: 'log-req-1', method: 'GET', path: '/api/v1/models', status: 200 })
  expect(typeof lines[0]!.duration_ms).toBe('number')
  expect(String(lines[0]!.key_id)).toStartWith('key_')
  expect(typeof lines[0]!.time).toBe('string')
  expect(lines[1]).toMatchObject({ status: 401 })
  expect(gw.output()).not.toContain(key)
  expect(gw.output()).not.toContain('sk-sy-wrong-secret')
})

test('SIGTERM lets an in-flight request finish, then exits 0; new connections are refused', async () => {
  const gw = await spawnGateway({ env: { SWITCHYARD_ADMIN_TOKEN: 'adm', SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-x' } })
  procs.push(gw)
  // a request whose body trickles in over ~1 s is in flight when the signal arrives
  const parts = ['{"name":', '"slow', '-one"', '}']
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      const p = parts.shift()
      if (p === undefined) return c.close()
      await Bun.sleep(250)
      c.enqueue(new TextEncoder().encode(p))
    },
  })
  const inflight = fetch(gw.url + '/admin/v1/keys', {
    method: 'POST',
    headers: { authorization: 'Bearer adm', 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit)
  await Bun.sleep(300)
  gw.kill('SIGTERM')
  const res = await inflight
  expect(res.status).toBe(201)
  expect(((await res.json()) as { name: string }).name).toBe('slow-one')
  expect(await gw.exited).toBe(0)
  expect(await fetch(gw.url + '/health').then(() => 'answered', () => 'refused')).toBe('refused')
})

// a stream still open when the stop's grace runs out is cut by the gateway, not by its client:
// its record says so (503), not "client disconnected" (499)
test('a stream cut when the shutdown grace runs out is recorded as the gateway\'s stop, not a client that left', async () => {
  const up = await startFakeUpstream()
  try {
    const events = fixture('openai/chat/stream-text-include-usage.sse').replaceAll('chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc', 'chatcmpl-cut-at-stop').split('\n\n')
    // two events, then the upstream holds the stream open
    up.script({ sse: events.slice(0, 2).join('\n\n') + '\n\n', hold: true })
    const env = { SWITCHYARD_BOOTSTRAP_KEY: 'sk-sy-cut-' + crypto.randomUUID(), OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url }
    const gw = await spawnGateway({ env, args: ['--config', writeConfig('server: { shutdown_grace_ms: 300 }\n')] })
    procs.push(gw)
    const res = await fetch(gw.url + '/api/alpha/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    const reader = res.body!.getReader()
    await reader.read()
    gw.kill('SIGTERM')
    // the client is told in band before the connection closes, in the surface's error shape
    let rest = ''
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true, value: undefined }))
      if (r.done) break
      rest += new TextDecoder().decode(r.value)
    }
    expect(rest).toContain('the gateway stopped: its shutdown grace ran out before the stream ended')
    expect(rest).not.toContain('[DONE]')
    expect(await gw.exited).toBe(0)
    const after = await spawnGateway({ dataDir: gw.dataDir, env })
    procs.push(after)
    const g = (await (await fetch(`${after.url}/api/v1/generations?id=chatcmpl-cut-at-stop`, { headers: { authorization: `Bearer ${gw.key}` } })).json()) as { generation: { error: string } }
    expect(g.generation.error).toBe('the gateway stopped: its shutdown grace ran out before the stream ended')
    const listed = (await (await fetch(`${after.url}/api/v1/generations?limit=5`, { headers: { authorization: `Bearer ${gw.key}` } })).json()) as { data: { id: string; http_status: number }[] }
    expect(listed.data.find((r) => r.id === 'chatcmpl-cut-at-stop')?.http_status).toBe(503)
    after.kill('SIGTERM')
    expect(await after.exited).toBe(0)
  } finally {
    await up.stop()
  }
})

/** A config file of its own for one gateway. */
function writeConfig(yaml: string): string {
  const file = join(tmpdir(), `switchyard-lifecycle-${crypto.randomUUID()}.yaml`)
  writeFileSync(file, yaml)
  return file
}

