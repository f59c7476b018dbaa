// What an operator reads back and types: a key's name and account, an upload's filename, the
// CLI's amounts, and the admin answers that carry a new secret.
//  - a C1 control (0x9b opens an escape on some terminals, `keys list` prints names as they are)
//    or a line/paragraph separator is refused in a key's name or account and in a filename,
//    named, like the C0 controls already were; bidi controls stay allowed (the dashboard
//    isolates them); a line separator in a part's head cut the filename (stored as `"a`)
//  - the CLI takes amounts in decimal only: `0x10` was 16 USD, `0b1` 1, ` 5` 5
//  - creating or rotating a key answers its secret with `cache-control: no-store`
//  - a credit too small to move the key's credits (5e-324; 1e-9 on a million) was a 200 that
//    changed nothing; it is a 400 saying so
//  - `keys list` shows a name or account that is not one plain word quoted and escaped, as the
//    text log does: a bidi control (allowed) reversed the rest of the line in the terminal, and
//    a C1 control a key got before the rule above drove it
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { runCli, startGateway, tempDir, cleanup, type Gateway } from '../helpers/server.ts'

const ADMIN = 'admin-operator-text-0123456789'
let gw: Gateway
const dirs: string[] = []
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_ADMIN_TOKEN: ADMIN } })
})
afterAll(async () => {
  await gw?.stop()
  for (const d of dirs) cleanup(d)
})

const admin = (path: string, body?: unknown, method = 'POST') =>
  fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })

const BAD = { 'a CSI (0x9b)': 'team\u009b31m', 'a NEL (0x85)': 'team\u0085x', 'U+2028': 'team\u2028x', 'U+2029': 'team\u2029x' }

describe('a key’s name and account', () => {
  for (const [what, text] of Object.entries(BAD)) {
    test(`holding ${what} is refused, named, on create and update`, async () => {
      for (const field of ['name', 'account']) {
        const r = await admin('/admin/v1/keys', { name: 'ok', [field]: text })
        const body = (await r.json()) as { error: string }
        expect({ status: r.status, rid: !!r.headers.get('x-request-id'), named: body.error.startsWith(`${field}:`) }).toEqual({ status: 400, rid: true, named: true })
      }
      const made = (await (await admin('/admin/v1/keys', { name: 'plain' })).json()) as { id: string }
      const r = await admin(`/admin/v1/keys/${made.id}`, { name: text }, 'PATCH')
      expect([r.status, ((await r.json()) as { error: string }).error.startsWith('name:')]).toEqual([400, true])
    })
  }

  test('a bidi control stays allowed (the dashboard shows it isolated)', async () => {
    const r = await admin('/admin/v1/keys', { name: 'team\u202e', account: 'acct\u2067' })
    expect(r.status).toBe(201)
  })
})

test('an upload’s filename holding a C1 control or U+2028 is refused, named', async () => {
  for (const name of ['a\u009b31m.txt', 'a\u2028b.txt']) {
    const fd = new FormData()
    fd.append('purpose', 'assistants')
    fd.append('file', new Blob(['x']), name)
    const r = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}` }, body: fd })
    const body = (await r.json()) as { error: string }
    expect({ status: r.status, named: body.error.includes('filename') }).toEqual({ status: 400, named: true })
  }
})

test('creating or rotating a key answers its secret with cache-control: no-store', async () => {
  const made = await admin('/admin/v1/keys', { name: 'secret-shown-once' })
  const { id, key } = (await made.json()) as { id: string; key: string }
  expect([made.status, key.startsWith('sk-sy-'), made.headers.get('cache-control')]).toEqual([201, true, 'no-store'])
  const rotated = await admin(`/admin/v1/keys/${id}/rotate`)
  expect([rotated.status, rotated.headers.get('cache-control')]).toEqual([200, 'no-store'])
})

test('a credit too small to change the key’s credits is a 400 saying so, not a 200 that changed nothing', async () => {
  const made = (await (await admin('/admin/v1/keys', { name: 'funded', credits: 1_000_000 })).json()) as { id: string }
  for (const amount of [5e-324, 1e-320, 1e-11]) {
    const r = await admin(`/admin/v1/keys/${made.id}/credit`, { amount })
    const body = (await r.json()) as { error?: string }
    expect([amount, r.status, body.error?.startsWith('amount:')]).toEqual([amount, 400, true])
  }
  const ok = await admin(`/admin/v1/keys/${made.id}/credit`, { amount: 0.001 })
  expect([ok.status, ((await ok.json()) as { credits: number }).credits]).toEqual([200, 1_000_000.001])
  const unlimited = (await (await admin('/admin/v1/keys', { name: 'unlimited' })).json()) as { id: string }
  const tiny = await admin(`/admin/v1/keys/${unlimited.id}/credit`, { amount: 5e-324 })
  expect(tiny.status).toBe(200)
})

describe('the CLI', () => {
  test('amounts are decimal only: hex, binary, octal and padded numbers are refused, naming the flag', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const made = await runCli(['keys', 'create', '--name', 'cli', '--json', '--data-dir', dir])
    expect(made.code).toBe(0)
    const { id } = JSON.parse(made.stdout) as { id: string }
    for (const amount of ['0x10', '0b1', '0o7', ' 5', '5 ', '1_000']) {
      const r = await runCli(['keys', 'credit', id, amount, '--data-dir', dir])
      expect([amount, r.code, r.stderr.includes('--amount')]).toEqual([amount, 2, true])
    }
    const c = await runCli(['keys', 'create', '--name', 'x', '--credits', '0x10', '--data-dir', dir])
    expect([c.code, c.stderr.includes('--credits')]).toEqual([2, true])
    // decimal notation, an exponent included, is still an amount
    for (const amount of ['5', '0.25', '1e2', '.5']) {
      const r = await runCli(['keys', 'credit', id, amount, '--data-dir', dir])
      expect([amount, r.code]).toEqual([amount, 0])
    }
    const list = JSON.parse((await runCli(['keys', 'list', '--json', '--data-dir', dir])).stdout) as { credits: number }[]
    expect(list[0]!.credits).toBe(105.75)
  })

  test('a name holding a C1 control is refused, naming --name', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const r = await runCli(['keys', 'create', '--name', 'a\u009b31m', '--data-dir', dir])
    expect([r.code, r.stderr.includes('--name')]).toEqual([2, true])
  })

  test('keys list quotes and escapes a name or account that is not one plain word', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const g = await startGateway({ dataDir: dir })
    // as a key made before C1 controls were refused holds it: the store takes what it is given
    await g.services.keys.create({ name: 'old\u009b31m', account: 'acct\u202eevil' })
    await g.services.keys.create({ name: 'two words', account: 'plain' })
    await g.stop()
    const r = await runCli(['keys', 'list', '--data-dir', dir])
    expect(r.code).toBe(0)
    // eslint-disable-next-line no-control-regex
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(r.stdout).toContain('name="old\\u009b31m"')
    expect(r.stdout).toContain('account="acct\\u202eevil"')
    expect(r.stdout).toContain('account=plain  name="two words"')
  })
})
