// A client that sends its API key where a model, an id or a path goes: the gateway's own error
// message, which quotes that value, does not carry the key back out, nor does the access log
// line that names the path; nor does any other log line carry a key it was handed.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '../../src/http/log.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

let gw: Gateway
const lines: string[] = []

beforeAll(async () => {
  gw = await startGateway({ env: NO_LIMITS, log: createLogger('info', (l) => lines.push(l)) })
})
afterAll(() => gw.stop())

/** The request, its answer's body, and the log lines written while it was answered. */
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; logged: string }> {
  const before = lines.length
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  const id = res.headers.get('x-request-id')!
  for (let i = 0; i < 50 && !lines.slice(before).some((l) => l.includes(id)); i++) await Bun.sleep(10)
  return { status: res.status, text, logged: lines.slice(before).join('') }
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] })

test("a key sent as a model or an id: the gateway's error says what was wrong, without the key", async () => {
  const key = gw.key
  const asked: [string, string, unknown?][] = [
    ['POST', '/api/alpha/v1/chat/completions', chat(key)],
    ['POST', '/api/beta/v1/messages', { ...chat(key), max_tokens: 10 }],
    ['GET', `/api/alpha/v1/files/${key}`],
    ['GET', `/api/alpha/v1/batches/${key}`],
    ['GET', `/api/alpha/v1/no-such-route/${key}`],
    ['GET', `/ui/assets/${key}`],
  ]
  const leaks: string[] = []
  const said: string[] = []
  for (const [method, path, body] of asked) {
    const { status, text } = await call(method, path, body)
    expect(status).toBeGreaterThanOrEqual(400)
    if (text.includes(key)) leaks.push(`${method} ${path.replace(key, '<key>')}: ${text.replace(key, '<key>')}`)
    said.push(JSON.parse(text).error)
  }
  expect(leaks).toEqual([])
  expect(said[0]).toBe('model: unknown model "[redacted]"; GET /api/v1/models lists the models this gateway serves')
  expect(said[2]).toBe('No such file: [redacted]')
})

test('a key in a path: the access log line names the path without it', async () => {
  const { logged } = await call('GET', `/api/alpha/v1/files/${gw.key}`)
  expect(logged).toContain('"msg":"request"')
  expect(logged).not.toContain(gw.key)
  expect(logged).toContain('/api/alpha/v1/files/[redacted]')
  // glued to the word before it, the gateway's key is still its own prefix's
  const glued = await call('GET', `/nothing/x${gw.key}`)
  expect(glued.status).toBe(404)
  expect(glued.text + glued.logged).not.toContain(gw.key.slice(6))
})

test("a key in a logged error's text or a URL's query is redacted in either log format", () => {
  for (const format of ['json', 'text'] as const) {
    const out: string[] = []
    const log = createLogger('info', (l) => out.push(l), format)
    log.warn('upstream failed', { url: 'https://proxy.example/v1?key=sk-proj-Abc123def456ghi789jkl&x=1', error: 'Error: bad key sk_live_51HxYzAbCdEf0123456789\n  at y' })
    expect(out[0]).not.toContain('Abc123def456')
    expect(out[0]).not.toContain('51HxYzAbCdEf')
    expect(out[0]).toContain('?key=[redacted]&x=1')
    if (format === 'json') expect(JSON.parse(out[0]!).error).toBe('Error: bad key [redacted]\n  at y')
  }
})
