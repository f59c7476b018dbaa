// A failure inside the gateway (a database's error, a bug) ends the request with a 502 that says
// only that it happened: the client and the record never get its own words, which may be a
// database's (the SQL, its parameters, a key's id). The log has them, under the request's id.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '../../src/http/log.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
const logs: string[] = []
beforeAll(async () => {
  gw = await startGateway({ log: createLogger('error', (l) => logs.push(l)) })
})
afterAll(() => gw.stop())

test('a database error while a request\'s file is looked up: a 502 without the database\'s words, which the log keeps', async () => {
  const sql = gw.services.storage.sql
  await sql.run('ALTER TABLE files RENAME TO files_elsewhere')
  let res: Response
  try {
    res = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: [{ type: 'text', text: 'read it' }, { type: 'file', file: { file_id: 'file-abc123' } }] }] }),
    })
  } finally {
    await sql.run('ALTER TABLE files_elsewhere RENAME TO files')
  }
  const body = (await res.json()) as { error: unknown }
  const message = JSON.stringify(body)
  expect(res.status).toBe(502)
  expect(res.headers.get('x-request-id')).toBeTruthy()
  expect(message).toContain("the gateway's log has what happened")
  expect(message).not.toMatch(/files|SELECT|relation|table|api_key/i)
  // the record says no more than the client was told
  const listed = (await (await fetch(`${gw.url}/api/v1/generations?limit=1`, { headers: { authorization: `Bearer ${gw.key}` } })).json()) as { data: { error?: string }[] }
  expect(listed.data[0]?.error ?? '').not.toMatch(/files|SELECT|relation|table/i)
  // the log has it, under the request's id
  const line = logs.find((l) => l.includes('failed inside the gateway'))
  expect(line).toContain(res.headers.get('x-request-id')!)
  expect(line).toMatch(/files/)
})
