// A file's delete removes its record, then fails the batches still reading it. A kill -9 between
// the two leaves a batch running on a file that no longer exists; the next start must fail it
// as the delete would have (input_file_deleted), not let it run on and bill for it. A file that
// expired while the gateway was down fails its batch at the next start too, said as expired.
import { expect, test } from 'bun:test'
import type { Sql } from '../../src/db/sql.ts'
import { openDatabaseOf } from '../helpers/database.ts'
import { startFakeUpstream } from '../helpers/fake-upstream.ts'
import { cleanup, spawnGateway, tempDir } from '../helpers/server.ts'
import { NO_LIMITS } from './helpers.ts'

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 8_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

/** A batch at work on a file, the gateway killed, `meanwhile` done to its database, a start: the failed batch's errors. */
async function restartedAfter(meanwhile: (sql: Sql, fileId: string) => Promise<unknown>): Promise<{ fileId: string; errors: any }> {
  const up = await startFakeUpstream()
  // the upstream never answers in time: the batch is still processing at the kill
  up.script({ waitMs: 60_000, json: {} })
  const dataDir = tempDir('switchyard-batch-file-crash-')
  const key = 'sk-sy-crash-' + crypto.randomUUID().replaceAll('-', '')
  const env = { ...NO_LIMITS, SWITCHYARD_BOOTSTRAP_KEY: key, OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: up.url, SWITCHYARD_BATCH_LEASE_MS: '2000' }
  const auth = { authorization: `Bearer ${key}` }
  try {
    const first = await spawnGateway({ env, dataDir })
    const lines = [0, 1, 2].map((i) => JSON.stringify({ custom_id: `c${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `item ${i}` }] } }))
    const form = new FormData()
    form.append('purpose', 'batch')
    form.append('file', new Blob([lines.join('\n') + '\n']), 'input.jsonl')
    const file = (await (await fetch(`${first.url}/api/alpha/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string }
    const created = await fetch(`${first.url}/api/alpha/v1/batches`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as { id: string }).id
    await until('the batch at work upstream', () => up.requests.length > 0)

    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)
    const db = await openDatabaseOf(dataDir)
    await meanwhile(db.sql, file.id)
    await db.close()

    const second = await spawnGateway({ env, dataDir })
    try {
      const batch = async () => (await (await fetch(`${second.url}/api/alpha/v1/batches/${id}`, { headers: auth })).json()) as any
      await until('the batch failed', async () => (await batch()).status === 'failed')
      return { fileId: file.id, errors: (await batch()).errors }
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    await up.stop()
    cleanup(dataDir)
  }
}

test('a batch whose input file was deleted as the gateway died is failed at the next start', async () => {
  // what a kill between the delete's two steps leaves: the file's record gone, the batch still open
  const { fileId, errors } = await restartedAfter((sql, id) => sql.run('DELETE FROM files WHERE id = ?', [id]))
  // nothing is left to tell a delete from an expiry the expiry pass had begun removing
  expect(errors.data).toEqual([{ code: 'input_file_deleted', message: `the input file ${fileId} is gone (deleted, or removed when it expired)`, line: null, param: null }])
}, 30_000)

test('a batch whose input file expired while the gateway was down is failed at the next start, said as expired', async () => {
  // its record is still there, its expiry past, until the expiry pass removes it
  const { fileId, errors } = await restartedAfter((sql, id) => sql.run('UPDATE files SET expires_at = ? WHERE id = ?', [Date.now() - 1_000, id]))
  expect(errors.data).toEqual([{ code: 'input_file_deleted', message: `the input file ${fileId} was removed when it expired`, line: null, param: null }])
}, 30_000)
