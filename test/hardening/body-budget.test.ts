// Many large bodies at once: the gateway reads and parses no more of them together than
// limits.body_budget_bytes allows, and one key's no more than half of that. Here the budget is
// 4 MiB and the large bodies 1.5 MiB, so two (of two keys) fit at once and a third is refused
// unread with a JSON 503 (retry-after, a request id); a
// small body is read all the same; the budget comes back whole once the bodies end, whether
// they were answered, cut by their client, or refused mid-way.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { bodyBytesHeld, setBodyBudget } from '../../src/http/body-budget.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const MiB = 1024 * 1024
const ADMIN = 'admin-body-budget-token'
let gw: Gateway
let port: number
/** Two more keys: a key's large bodies hold half the budget at most, so the two that fill it are of two keys. */
let keyA: string
let keyB: string
beforeAll(async () => {
  gw = await startGateway({
    env: { SWITCHYARD_ADMIN_TOKEN: ADMIN },
    yaml: `limits: { max_body_bytes: ${2 * MiB}, body_budget_bytes: ${4 * MiB}, key_rpm: 100000, key_burst_rps: 10000, ip_rpm: 100000 }\n`,
  })
  port = Number(new URL(gw.url).port)
  keyA = (await gw.services.keys.create({ name: 'a' })).key
  keyB = (await gw.services.keys.create({ name: 'b' })).key
})
afterAll(async () => {
  await gw.stop()
  // the budget is the process's: other test files in this process get the default back
  setBodyBudget(256 * MiB)
})

/** A chat body of about `bytes`: a session of messages of about 1 KiB. */
function chatBody(bytes: number): string {
  const text = 'lorem ipsum dolor sit amet '.repeat(38)
  const messages: { role: string; content: string }[] = []
  for (let size = 100; size < bytes; size += text.length + 40) messages.push({ role: messages.length % 2 ? 'assistant' : 'user', content: text })
  if (messages.length % 2 === 0) messages.push({ role: 'user', content: 'end' })
  return JSON.stringify({ model: 'mock-gpt', max_tokens: 8, messages })
}

const BIG = chatBody(1.5 * MiB)
const SMALL = chatBody(4 * 1024)

interface Answer {
  status: number
  headers: Record<string, string>
  body: string
}

/** A request on a socket of its own, its body written as the test says: the answer comes when the gateway gives it. */
function open(path: string, head: Record<string, string>, first: string, key = gw.key) {
  let buf = Buffer.alloc(0)
  let settle: (a: Answer) => void
  const answer = new Promise<Answer>((r) => (settle = r))
  const parse = (): Answer | undefined => {
    const at = buf.indexOf('\r\n\r\n')
    if (at < 0) return undefined
    const lines = buf.subarray(0, at).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim()
    const body = buf.subarray(at + 4)
    if (headers['content-length'] !== undefined && body.length < Number(headers['content-length'])) return undefined
    return { status: Number(lines[0]!.split(' ')[1]), headers, body: body.toString('utf8') }
  }
  let connected: () => void
  const ready = new Promise<void>((r) => (connected = r))
  const sock: Socket = connect(port, '127.0.0.1', () => {
    const lines = Object.entries({ host: 'gw', authorization: `Bearer ${key}`, 'content-type': 'application/json', ...head }).map(([k, v]) => `${k}: ${v}`)
    sock.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`)
    sock.write(first)
    connected()
  })
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d as Buffer])
    const a = parse()
    if (a) settle(a), sock.destroy()
  })
  sock.on('error', () => {})
  sock.on('close', () => settle(parse() ?? { status: 0, headers: {}, body: '' }))
  // what is sent later goes after the head, in order, once the socket is open
  return { answer, send: (rest: string) => void ready.then(() => sock.write(rest)), cut: () => sock.destroy() }
}

/** A large body sent up to `sent` bytes, then held there: its share is taken as its read begins. */
function held(body: string, key: string, sent = 64 * 1024) {
  const r = open('/api/alpha/v1/chat/completions', { 'content-length': String(Buffer.byteLength(body)) }, body.slice(0, sent), key)
  return { ...r, finish: () => r.send(body.slice(sent)) }
}

async function until(ok: () => boolean, what: string) {
  for (const end = Date.now() + 10_000; !ok(); await Bun.sleep(10)) if (Date.now() > end) throw new Error(`not reached: ${what} (held ${bodyBytesHeld()})`)
}

/** Two large bodies, each sent in part and held there: once their reads begin they fill the budget. */
async function fillBudget() {
  const a = held(BIG, keyA)
  const b = held(BIG, keyB)
  // (a gateway that keeps no budget never gets there: the checks that follow say what it does instead)
  for (const end = Date.now() + 3000; bodyBytesHeld() < 2 * Buffer.byteLength(BIG) && Date.now() < end; ) await Bun.sleep(10)
  return [a, b] as const
}

/** A large body sent whole at once. */
const bigAtOnce = () => open('/api/alpha/v1/chat/completions', { 'content-length': String(BIG.length) }, BIG).answer

const post = (body: string) =>
  fetch(`${gw.url}/api/alpha/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body })

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text()
  const line = text.split('\n').find((l) => l.startsWith(name + ' '))
  return Number(line?.split(' ')[1] ?? NaN)
}

const isBusy = (a: Answer) => {
  expect(a.status).toBe(503)
  expect(a.headers['retry-after']).toBe('1')
  expect(a.headers['x-request-id']).toBeTruthy()
  expect(a.headers.connection).toBe('close')
  expect(JSON.parse(a.body).error).toMatch(/as many large request bodies as it has room for/)
}

describe('the bytes of bodies read at once', () => {
  test('two large bodies being read fill the budget: a third is refused unread, a small one is served, and once they end a large one is read again', async () => {
    const refusedBefore = await metric('switchyard_body_budget_refused_total')
    const [a, b] = await fillBudget()
    // sent whole at once, yet refused before its first byte is read
    isBusy(await bigAtOnce())
    // the messages route shares the budget
    const msg = JSON.stringify({ ...JSON.parse(BIG), model: 'mock-claude' })
    isBusy(await open('/api/beta/v1/messages', { 'content-length': String(msg.length), 'anthropic-version': '2023-06-01' }, msg).answer)
    // and so does an inline batch, on the app's router
    const batch = JSON.stringify({ requests: [{ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: JSON.parse(BIG) }] })
    isBusy(await open('/api/v1/batches', { 'content-length': String(batch.length) }, batch).answer)
    // small requests flow all the while
    expect((await post(SMALL)).status).toBe(200)
    expect(await metric('switchyard_body_budget_refused_total')).toBe(refusedBefore + 3)
    expect(await metric('switchyard_body_bytes_reading')).toBe(2 * Buffer.byteLength(BIG))

    a.finish()
    b.finish()
    expect((await a.answer).status).toBe(200)
    expect((await b.answer).status).toBe(200)
    await until(() => bodyBytesHeld() === 0, 'the budget given back')
    // large bodies are read again, two at once as before
    const [c, d] = await fillBudget()
    expect(bodyBytesHeld()).toBe(2 * Buffer.byteLength(BIG))
    c.finish()
    d.finish()
    expect([(await c.answer).status, (await d.answer).status]).toEqual([200, 200])
    expect((await post(BIG)).status).toBe(200)
    expect(bodyBytesHeld()).toBe(0)
  })

  test('a large body whose client goes away mid-way gives its share back at once', async () => {
    const [a, b] = await fillBudget()
    isBusy(await bigAtOnce())
    a.cut()
    await until(() => bodyBytesHeld() === Buffer.byteLength(BIG), "the cut body's share given back")
    expect((await bigAtOnce()).status).toBe(200)
    b.finish()
    expect((await b.answer).status).toBe(200)
    await until(() => bodyBytesHeld() === 0, 'the budget given back')
  })

  test('a chunked body, of no declared length, is counted as it arrives: refused once large and past the budget, its share given back', async () => {
    const [a, b] = await fillBudget()
    // small and chunked: read whatever the budget holds
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`
    const small = open('/api/alpha/v1/chat/completions', { 'transfer-encoding': 'chunked' }, chunk(SMALL) + '0\r\n\r\n')
    expect((await small.answer).status).toBe(200)
    // large and chunked: refused once past the 1 MiB every body may have, its client still sending
    const c = open('/api/alpha/v1/chat/completions', { 'transfer-encoding': 'chunked' }, '')
    for (let i = 0; i < BIG.length; i += 64 * 1024) c.send(chunk(BIG.slice(i, i + 64 * 1024)))
    c.send('0\r\n\r\n')
    isBusy(await c.answer)
    expect(bodyBytesHeld()).toBe(2 * Buffer.byteLength(BIG))
    a.finish()
    b.finish()
    expect((await a.answer).status).toBe(200)
    expect((await b.answer).status).toBe(200)
    await until(() => bodyBytesHeld() === 0, 'the budget given back')
  })

  test("one key's large bodies hold half the budget at most: its connections that declare large bodies and send them slowly leave room for another key's", async () => {
    const a = held(BIG, keyA)
    await until(() => bodyBytesHeld() === Buffer.byteLength(BIG), 'the first body read')
    // the same key's second large body would take it past half of 4 MiB
    isBusy(await open('/api/alpha/v1/chat/completions', { 'content-length': String(BIG.length) }, BIG, keyA).answer)
    // another key's is read, and so is a small one of the first key
    expect((await bigAtOnce()).status).toBe(200)
    expect((await open('/api/alpha/v1/chat/completions', { 'content-length': String(SMALL.length) }, SMALL, keyA).answer).status).toBe(200)
    a.finish()
    expect((await a.answer).status).toBe(200)
    await until(() => bodyBytesHeld() === 0, 'the budget given back')
    // and once it is given back, the key's next large body is read
    expect((await open('/api/alpha/v1/chat/completions', { 'content-length': String(BIG.length) }, BIG, keyA).answer).status).toBe(200)
  })

  test('bodies that fail (too large, not JSON, compressed wrong) give their share back: two large ones are read at once after them', async () => {
    const tooLarge = open('/api/alpha/v1/chat/completions', { 'content-length': String(3 * MiB) }, 'x'.repeat(1000))
    expect((await tooLarge.answer).status).toBe(413)
    expect((await post(BIG.slice(0, -1))).status).toBe(400)
    const whole = Bun.gzipSync(Buffer.from(BIG))
    const broken = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: whole.subarray(0, whole.length >> 1),
    })
    expect(broken.status).toBe(400)
    await until(() => bodyBytesHeld() === 0, 'the budget given back')
    const [a, b] = await fillBudget()
    a.finish()
    b.finish()
    expect([(await a.answer).status, (await b.answer).status]).toEqual([200, 200])
  })
})
