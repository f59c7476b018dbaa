// A key's credits and spent are sums of doubles, each grant and charge adding its float noise
// (1.001 + 0.005 is 1.0059999999999998). They are kept to 1e-10 USD, rounded in the statement
// that adds (SQLite, PostgreSQL, Redis), so the admin API, the CLI and the dashboard show the
// sum a person expects, and the stored row holds it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { names } from '../../src/db/columns.ts'
import { apiKeys } from '../../src/db/schema.ts'
import { fixtureJson, startFakeUpstream, upstreamEnv, type FakeUpstream } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

const ADMIN = 'admin-money-sums-0123456789'
// gpt-4o at $0.1 a prompt token: a request of n prompt tokens costs n × 0.1
const YAML = `pricing:\n  overrides:\n    gpt-4o: { input_mtok: 100000, output_mtok: 0 }\n`
const k = names(apiKeys)

let up: FakeUpstream
let gw: Gateway
beforeAll(async () => {
  up = await startFakeUpstream()
  up.script((req) => {
    const reply = fixtureJson('openai/chat/nonstream-text.json')
    reply.usage = { prompt_tokens: Number(req.json().messages[0].content), completion_tokens: 0, total_tokens: 0 }
    return { json: reply }
  })
  gw = await startGateway({ env: { ...upstreamEnv(up), SWITCHYARD_ADMIN_TOKEN: ADMIN }, yaml: YAML })
})
afterAll(async () => {
  await gw?.stop()
  await up?.stop()
})

const admin = (path: string, body?: unknown) =>
  fetch(`${gw.url}${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })

const stored = async (id: string) => (await gw.services.storage.sql.get<{ credits: number; spent: number }>(`SELECT ${k.credits} AS credits, ${k.spent} AS spent FROM ${k.$table} WHERE ${k.id} = ?`, [id]))!

test('credits granted in steps add up to the decimal sum: 1.001 + 0.005 is 1.006, answered, read back and stored', async () => {
  const made = (await (await admin('/admin/v1/keys', { name: 'grants', credits: 1.001 })).json()) as { id: string }
  const r = await admin(`/admin/v1/keys/${made.id}/credit`, { amount: 0.005 })
  expect([r.status, ((await r.json()) as { credits: number }).credits]).toEqual([200, 1.006])
  expect(((await (await admin(`/admin/v1/keys/${made.id}`)).json()) as { credits: number }).credits).toBe(1.006)
  expect((await stored(made.id)).credits).toBe(1.006)
  // many small grants: 0.1 ten times over is 1 (the doubles' own sum is 0.9999999999999999)
  const tenths = (await (await admin('/admin/v1/keys', { name: 'tenths', credits: 0.1 })).json()) as { id: string }
  for (let i = 0; i < 9; i++) expect((await admin(`/admin/v1/keys/${tenths.id}/credit`, { amount: 0.1 })).status).toBe(200)
  expect((await stored(tenths.id)).credits).toBe(1)
})

test('what requests spend adds up to the decimal sum: $0.1 + $0.2 is $0.3, shown and stored', async () => {
  const made = (await (await admin('/admin/v1/keys', { name: 'spender', credits: 100 })).json()) as { id: string; key: string }
  for (const tokens of [1, 2]) {
    const r = await fetch(`${gw.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${made.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: String(tokens) }] }),
    })
    expect(r.status).toBe(200)
    await r.text()
  }
  const deadline = Date.now() + 10_000
  while ((await stored(made.id)).spent === 0.1 || (await stored(made.id)).spent === 0) {
    if (Date.now() > deadline) break
    await Bun.sleep(20)
  }
  expect((await stored(made.id)).spent).toBe(0.3)
  expect(((await (await admin(`/admin/v1/keys/${made.id}`)).json()) as { spent: number }).spent).toBe(0.3)
  const figures = await gw.services.billing.figures(made.id)
  if (figures?.spent != null) expect(figures.spent).toBe(0.3)
})
