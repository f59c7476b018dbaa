// `database.pool_size` bounds the PostgreSQL connections a gateway's request thread opens, and
// the gateway works at any size, one included: no request may need a second connection of the
// pool while it holds the first (a pool of one would then wait for ever). The connections are
// read off the gateway process itself (its sockets to the database's port), so the other tests
// sharing the database do not count.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import OpenAI from 'openai'
import { onPostgres, TEST_DATABASE_URL } from '../helpers/database.ts'
import { cleanup, runCli, spawnGateway, tempDir, type Spawned } from '../helpers/server.ts'

/**
 * The process's open TCP connections to `port` (its sockets' inodes looked up in its net table),
 * each counted once: the kernel writes that table a page a read, and a table that changes between
 * two reads (the other suites' connections opening and closing) gives some lines twice: 26 reads
 * in 237 beside another process opening and closing connections. Counting lines, one CI run
 * read 12 where every other run read at most 6.
 */
function connectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m) inodes.add(m[1]!)
    } catch {} // closed meanwhile
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  const open = new Set<string>()
  for (const table of ['tcp', 'tcp6']) {
    let text = ''
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      // remote address's port, state 01 (established), the socket's inode
      if (f.length > 9 && f[2]!.endsWith(':' + hexPort) && f[3] === '01' && inodes.has(f[9]!)) open.add(f[9]!)
    }
  }
  return open.size
}

const WORKERS = 2
const dbPort = TEST_DATABASE_URL ? Number(new URL(TEST_DATABASE_URL).port || 5432) : 0

async function load(gw: Spawned, key: string) {
  const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  let most = 0
  const watch = setInterval(() => (most = Math.max(most, connectionsTo(gw.proc.pid, dbPort))), 5)
  try {
    const asks = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0
        ? (async () => {
            const stream = await client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: `stream ${i}` }], stream: true, stream_options: { include_usage: true } })
            let text = ''
            for await (const c of stream) text += c.choices[0]?.delta?.content ?? ''
            return text
          })()
        : i % 4 === 1
          ? client.responses.create({ model: 'mock-gpt', input: `stored ${i}`, store: true }).then((r) => client.responses.retrieve(r.id)).then((r) => r.output_text)
          : client.chat.completions.create({ model: 'mock-gpt', messages: [{ role: 'user', content: `plain ${i}` }] }).then((r) => r.choices[0]!.message.content ?? ''),
    )
    // a batch beside them: its workers open pools of their own, held to the same size
    const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify({ custom_id: `b${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: 'user', content: `batch ${i}` }] } }))
    const file = await client.files.create({ file: new File([lines.join('\n')], 'batch.jsonl'), purpose: 'batch' })
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
    const texts = await Promise.all(asks)
    expect(texts.every((x) => x.length > 0)).toBe(true)
    let ended = await client.batches.retrieve(batch.id)
    for (const end = Date.now() + 30_000; ended.status !== 'completed' && Date.now() < end; await Bun.sleep(100)) ended = await client.batches.retrieve(batch.id)
    expect(ended.status).toBe('completed')
    expect(ended.request_counts).toEqual({ total: 20, completed: 20, failed: 0 })
  } finally {
    clearInterval(watch)
  }
  return most
}

describe.skipIf(!onPostgres || process.platform !== 'linux')('database.pool_size', () => {
  let small: Spawned
  let key: string
  beforeAll(async () => {
    const dir = tempDir()
    // a funded key: its holds are rows of the database's, written in transactions
    const made = await runCli(['keys', 'create', '--name', 'pool', '--credits', '100', '--json', '--data-dir', dir], { SWITCHYARD_DATABASE_POOL_SIZE: '1' })
    expect(made.code).toBe(0)
    key = (JSON.parse(made.stdout) as { key: string }).key
    small = await spawnGateway({ dataDir: dir, env: { SWITCHYARD_DATABASE_POOL_SIZE: '1', SWITCHYARD_BATCH_WORKERS: String(WORKERS), SWITCHYARD_KEY_BURST_RPS: '1000', SWITCHYARD_KEY_RPM: '100000' } })
  })
  afterAll(async () => {
    small?.kill()
    await small?.exited
    if (small) cleanup(small.dataDir)
  })

  test('a pool of one serves concurrent streams, stored responses, funded requests and a batch, each pool on one connection', async () => {
    const most = await load(small, key)
    // the pool's one, the credit holds' lock session (no Redis here), the change bus's LISTEN
    // connection, and the batch's results writer and item workers, one each
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(3 + 1 + WORKERS)
  })
})
