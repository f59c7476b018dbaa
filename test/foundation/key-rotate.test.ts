// Rotating a key's secret (POST /admin/v1/keys/:id/rotate, `switchyard keys rotate ID`): the old
// secret is refused at once, the new one works at once, and the key keeps its id, spend, files,
// batches, records and response threads. On SQLite, or on PostgreSQL with SWITCHYARD_TEST_DATABASE_URL.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import OpenAI from 'openai'
import { runCli, startGateway, type Gateway } from '../helpers/server.ts'
import { NO_LIMITS } from '../batches/helpers.ts'

const ADMIN = 'adm-rotate-' + crypto.randomUUID()
const YAML = 'pricing:\n  overrides:\n    mock-gpt: { input_mtok: 100, output_mtok: 200 }\n'

describe('rotating a key', () => {
  let gw: Gateway
  beforeAll(async () => {
    gw = await startGateway({ env: { ...NO_LIMITS, SWITCHYARD_ADMIN_TOKEN: ADMIN }, yaml: YAML })
  })
  afterAll(() => gw.stop())

  const admin = (method: string, path: string, body?: string) =>
    fetch(gw.url + path, { method, headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body })
  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/alpha/v1`, maxRetries: 0 })
  const status = (p: Promise<unknown>) => p.then(() => 200, (e) => (e instanceof OpenAI.APIError ? e.status : Promise.reject(e)))
  const models = (key: string) => status(client(key).models.list())
  const make = async (name: string) => (await (await admin('POST', '/admin/v1/keys', JSON.stringify({ name, account: 'acme', credits: 10, rpm: 500 }))).json()) as { id: string; key: string }

  test('the old secret is refused and the new one served at once; spend, files, batches, records and threads stay with the key', async () => {
    const made = await make('rotated')
    const old = client(made.key)
    const chat = await old.chat.completions.create({ model: 'mock-gpt', max_tokens: 5, messages: [{ role: 'user', content: 'mock: text before the rotation' }] })
    const file = await old.files.create({ file: new File(['kept bytes'], 'kept.txt', { type: 'text/plain' }), purpose: 'user_data' })
    const thread = await old.responses.create({ model: 'mock-gpt', input: 'mock: text a thread' })
    const line = JSON.stringify({ custom_id: 'one', method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text in a batch' }] } })
    const input = await old.files.create({ file: new File([line + '\n'], 'batch.jsonl', { type: 'application/jsonl' }), purpose: 'batch' })
    const batch = await old.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
    await gw.services.recorder.flush()
    const before = (await (await admin('GET', `/admin/v1/keys/${made.id}`)).json()) as { spent: number; key_prefix: string }
    expect(before.spent).toBeGreaterThan(0)

    const r = await admin('POST', `/admin/v1/keys/${made.id}/rotate`)
    expect(r.status).toBe(200)
    const rotated = (await r.json()) as { id: string; key: string; key_prefix: string; name: string; account: string; status: string; credits: number; spent: number; rpm: number }
    expect(rotated).toMatchObject({ id: made.id, name: 'rotated', account: 'acme', status: 'active', credits: 10, spent: before.spent, rpm: 500 })
    expect(rotated.key).toMatch(/^sk-sy-[A-Za-z0-9_-]{40,}$/)
    expect(rotated.key).not.toBe(made.key)
    expect(rotated.key.startsWith(rotated.key_prefix)).toBe(true)

    // at once: no wait for a poll
    const refused = await old.models.list().then(() => undefined, (e) => e)
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError)
    expect(refused.status).toBe(401)
    expect(JSON.stringify(refused.error)).not.toContain(made.key)
    const now = client(rotated.key)
    expect(await models(rotated.key)).toBe(200)
    expect((await now.files.list()).data.map((f) => f.id)).toContain(file.id)
    expect(await (await now.files.content(file.id)).text()).toBe('kept bytes')
    expect((await now.responses.retrieve(thread.id)).id).toBe(thread.id)
    expect((await now.batches.retrieve(batch.id)).id).toBe(batch.id)
    expect((await now.batches.list()).data.map((x) => x.id)).toContain(batch.id)
    const next = await now.responses.create({ model: 'mock-gpt', input: 'mock: text and on', previous_response_id: thread.id })
    expect(next.status).toBe('completed')
    const rec = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(chat.id)}`, { headers: { authorization: `Bearer ${rotated.key}` } })
    expect(rec.status).toBe(200)
    expect(((await rec.json()) as { generation: { id: string } }).generation.id).toBe(chat.id)
    const after = (await (await admin('GET', `/admin/v1/keys/${made.id}`)).json()) as { spent: number; key_prefix: string }
    expect(after.spent).toBeGreaterThanOrEqual(before.spent)
    expect(after.key_prefix).toBe(rotated.key_prefix)
    // the old secret stays refused (looked up once, then known to be no key), and nothing lists either secret
    expect(await models(made.key)).toBe(401)
    const listing = await (await admin('GET', '/admin/v1/keys')).text()
    expect(listing).not.toContain(made.key)
    expect(listing).not.toContain(rotated.key)
  }, 30_000)

  test('a disabled key is rotated and stays disabled; enabled, the new secret works and the old does not', async () => {
    const made = await make('disabled then rotated')
    expect(await models(made.key)).toBe(200)
    expect((await admin('POST', `/admin/v1/keys/${made.id}/disable`)).status).toBe(200)
    const r = await admin('POST', `/admin/v1/keys/${made.id}/rotate`, '{}')
    expect(r.status).toBe(200)
    const rotated = (await r.json()) as { key: string; status: string }
    expect(rotated.status).toBe('inactive')
    expect(await models(rotated.key)).toBe(401)
    expect((await admin('POST', `/admin/v1/keys/${made.id}/enable`)).status).toBe(200)
    expect(await models(rotated.key)).toBe(200)
    expect(await models(made.key)).toBe(401)
  })

  test('an unknown id is a 404, an unknown field a 400 naming it, malformed JSON a 400; the key is left as it was', async () => {
    const made = await make('checked')
    const cases: [string, string | undefined, number, RegExp][] = [
      ['/admin/v1/keys/key_nosuchkey/rotate', undefined, 404, /key_nosuchkey/],
      [`/admin/v1/keys/${made.id}/rotate`, '{"grace":5}', 400, /^grace: /],
      [`/admin/v1/keys/${made.id}/rotate`, '{"grace_period_seconds":-1}', 400, /^grace_period_seconds: expected an integer 0 to 2592000/],
      [`/admin/v1/keys/${made.id}/rotate`, '{"grace_period_seconds":1.5}', 400, /^grace_period_seconds: /],
      [`/admin/v1/keys/${made.id}/rotate`, '{"grace_period_seconds":"60"}', 400, /^grace_period_seconds: /],
      [`/admin/v1/keys/${made.id}/rotate`, '{"grace_period_seconds":2592001}', 400, /^grace_period_seconds: /],
      [`/admin/v1/keys/${made.id}/rotate`, '{"grace_period_seconds":null}', 400, /^grace_period_seconds: /],
      [`/admin/v1/keys/${made.id}/rotate`, '{"name":"x"}', 400, /^name: /],
      [`/admin/v1/keys/${made.id}/rotate`, '[1]', 400, /body|expected/i],
      [`/admin/v1/keys/${made.id}/rotate`, '{"', 400, /JSON/],
    ]
    for (const [path, body, code, said] of cases) {
      const r = await admin('POST', path, body)
      expect(r.status).toBe(code)
      expect(r.headers.get('x-request-id')).toBeTruthy()
      expect((await r.json()).error).toMatch(said)
    }
    expect(await models(made.key)).toBe(200)
    // and only the admin token may rotate: the key itself may not
    const self = await fetch(`${gw.url}/admin/v1/keys/${made.id}/rotate`, { method: 'POST', headers: { authorization: `Bearer ${made.key}` } })
    expect(self.status).toBe(401)
    expect(await models(made.key)).toBe(200)
  })

  test('with a grace period the old secret keeps working beside the new one until it ends, then is refused; the key says until when', async () => {
    const made = await make('rotated with a grace period')
    expect(await models(made.key)).toBe(200)
    const before = Date.now()
    const r = await admin('POST', `/admin/v1/keys/${made.id}/rotate`, JSON.stringify({ grace_period_seconds: 2 }))
    expect(r.status).toBe(200)
    const rotated = (await r.json()) as { key: string; previous_key_expires_at: number | null }
    expect(rotated.previous_key_expires_at! * 1000).toBeGreaterThanOrEqual(before + 2_000)
    expect(rotated.previous_key_expires_at! * 1000).toBeLessThanOrEqual(Date.now() + 3_000)
    // both serve, and what either does is the one key's
    const chat = await client(made.key).chat.completions.create({ model: 'mock-gpt', max_tokens: 5, messages: [{ role: 'user', content: 'mock: text in the grace' }] })
    expect(chat.id).toBeTruthy()
    expect(await models(rotated.key)).toBe(200)
    const shown = (await (await admin('GET', `/admin/v1/keys/${made.id}`)).json()) as { previous_key_expires_at: number | null }
    expect(shown.previous_key_expires_at).toBe(rotated.previous_key_expires_at)
    const listing = (await (await admin('GET', '/admin/v1/keys')).json()) as { data: { id: string; previous_key_expires_at: number | null }[] }
    expect(listing.data.find((k) => k.id === made.id)!.previous_key_expires_at).toBe(rotated.previous_key_expires_at)
    while (Date.now() < rotated.previous_key_expires_at! * 1000 + 50) await Bun.sleep(50)
    expect(await models(made.key)).toBe(401)
    expect(await models(rotated.key)).toBe(200)
    const after = (await (await admin('GET', `/admin/v1/keys/${made.id}`)).json()) as { previous_key_expires_at: number | null }
    expect(after.previous_key_expires_at).toBeNull()
    // a grace ended early: the old secret is refused from then on, the new one stays
    const early = (await (await admin('POST', `/admin/v1/keys/${made.id}/rotate`, JSON.stringify({ grace_period_seconds: 600 }))).json()) as { key: string }
    expect(await models(rotated.key)).toBe(200)
    const ended = await admin('POST', `/admin/v1/keys/${made.id}/revoke-previous`)
    expect(ended.status).toBe(200)
    expect(((await ended.json()) as { previous_key_expires_at: unknown }).previous_key_expires_at).toBeNull()
    expect(await models(rotated.key)).toBe(401)
    expect(await models(early.key)).toBe(200)
    // again, with none left: the key as it is
    expect((await admin('POST', `/admin/v1/keys/${made.id}/revoke-previous`)).status).toBe(200)
    expect(await models(early.key)).toBe(200)
    const unknown = await admin('POST', '/admin/v1/keys/key_nosuchkey/revoke-previous')
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: string }).error).toContain('key_nosuchkey')
    // a rotation without one, the previous secret's grace still running, ends it at once
    const again = (await (await admin('POST', `/admin/v1/keys/${made.id}/rotate`, JSON.stringify({ grace_period_seconds: 600 }))).json()) as { key: string }
    expect(await models(early.key)).toBe(200)
    const last = (await (await admin('POST', `/admin/v1/keys/${made.id}/rotate`, '{"grace_period_seconds":0}')).json()) as { key: string; previous_key_expires_at: number | null }
    expect(last.previous_key_expires_at).toBeNull()
    expect(await models(early.key)).toBe(401)
    expect(await models(again.key)).toBe(401)
    expect(await models(last.key)).toBe(200)
  }, 30_000)

  test('switchyard keys rotate ID (another process on the data dir): the new secret printed once works at once, the old one is refused within the poll', async () => {
    const made = await make('rotated by the CLI')
    expect(await models(made.key)).toBe(200) // in this server's memory
    const cli = await runCli(['keys', 'rotate', made.id, '--json', '--data-dir', gw.dataDir])
    expect(cli.code).toBe(0)
    const out = JSON.parse(cli.stdout) as { id: string; key: string; status: string }
    expect(out).toMatchObject({ id: made.id, status: 'active' })
    expect(cli.stderr).not.toContain(out.key)
    expect(await models(out.key)).toBe(200) // unknown here: looked up
    const t0 = performance.now()
    while ((await models(made.key)) !== 401) {
      expect(performance.now() - t0).toBeLessThan(2_000)
      await Bun.sleep(20)
    }
    const missing = await runCli(['keys', 'rotate', 'key_nosuchkey', '--data-dir', gw.dataDir])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('no key with id key_nosuchkey')
    const plain = await runCli(['keys', 'rotate', made.id, '--data-dir', gw.dataDir])
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(/^sk-sy-\S+\n {2}id key_.*the old secret no longer works/)
    const plainKey = plain.stdout.split('\n')[0]!
    // with a grace period the old secret goes on working here, past the poll that reads the change
    const graced = await runCli(['keys', 'rotate', made.id, '--grace', '600', '--data-dir', gw.dataDir])
    expect(graced.code).toBe(0)
    expect(graced.stdout).toMatch(/the old secret works until 20\d\d-/)
    const gracedKey = graced.stdout.split('\n')[0]!
    expect(await models(gracedKey)).toBe(200)
    await Bun.sleep(1_500)
    expect(await models(plainKey)).toBe(200)
    expect(await models(gracedKey)).toBe(200)
    const listed = await runCli(['keys', 'list', '--data-dir', gw.dataDir])
    expect(listed.stdout.split('\n').find((l) => l.startsWith(made.id))).toMatch(/ old secret until 20\d\d-\d\d-\d\dT/)
    for (const bad of ['-5', '1.5', 'ten', '2592001']) {
      const refused = await runCli(['keys', 'rotate', made.id, `--grace=${bad}`, '--data-dir', gw.dataDir])
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain('--grace: expected a whole number of seconds')
    }
    expect(await models(gracedKey)).toBe(200)
    // the grace ended early by the CLI: the old secret refused within the poll (5 s on PostgreSQL,
    // whose bus, the rotation's check above, usually tells it in ms), the new one stays
    const revoked = await runCli(['keys', 'revoke-previous', made.id, '--data-dir', gw.dataDir])
    expect(revoked.code).toBe(0)
    const t1 = performance.now()
    while ((await models(plainKey)) !== 401) {
      expect(performance.now() - t1).toBeLessThan(7_000)
      await Bun.sleep(20)
    }
    expect(await models(gracedKey)).toBe(200)
  }, 30_000)
})
