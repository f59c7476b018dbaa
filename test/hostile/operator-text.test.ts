// What an operator reads back: a key's name and account, an upload's filename, and the admin
// answers that carry a new secret (the CLI's side: cli-text.test.ts).
//  - a C1 control (0x9b opens an escape on some terminals, `keys list` prints names as they are)
//    or a line/paragraph separator is refused in a key's name or account and in a filename,
//    named, like the C0 controls already were; a line separator in a part's head cut the
//    filename (stored as `"a`)
//  - so is an invisible format character (zero-width space or joiner, BOM, soft hyphen, bidi
//    control): 'admin' and 'ad<U+200B>min' were two keys' names that read the same; the joiners
//    and tags that draw an emoji stay allowed
//  - creating or rotating a key answers its secret with `cache-control: no-store`
//  - a credit too small to move the key's credits (5e-324; 1e-9 on a million) was a 200 that
//    changed nothing; it is a 400 saying so (credits are kept to 1e-10 USD: billing/money-sums)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startGateway, cleanup, type Gateway } from '../helpers/server.ts'

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

const BAD = {
  'a CSI (0x9b)': 'team\u009b31m',
  'a NEL (0x85)': 'team\u0085x',
  'U+2028': 'team\u2028x',
  'U+2029': 'team\u2029x',
  'a zero-width space': 'ad\u200bmin',
  'a zero-width joiner between letters': 'ad\u200dmin',
  'a byte order mark': '\ufeffadmin',
  'a soft hyphen': 'ad\u00admin',
  'a word joiner': 'ad\u2060min',
  'a right-to-left override': 'team\u202e',
  'a first-strong isolate': 'acct\u2068x\u2069',
  'a tag character': 'admin\u{e0041}',
}

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

  test('emoji drawn with joiners or tags, and the joiners of scripts that need them, stay allowed', async () => {
    for (const name of ['dev 👩\u200d💻', 'family 👨\u200d👩\u200d👧', 'flag 🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}', 'تیم می\u200cخواهد', 'क्\u200dष']) {
      const r = await admin('/admin/v1/keys', { name, account: name })
      expect([name, r.status]).toEqual([name, 201])
    }
  })
})

test('an upload’s filename holding a C1 control, U+2028 or an invisible format character is refused, named', async () => {
  for (const name of ['a\u009b31m.txt', 'a\u2028b.txt', 'a\u200bb.txt', 'invoice\u202etxt.exe']) {
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
  // credits are kept to 1e-10 USD: less than half of that leaves an unlimited key's nothing as it was
  const tiny = await admin(`/admin/v1/keys/${unlimited.id}/credit`, { amount: 5e-324 })
  expect([tiny.status, ((await tiny.json()) as { error: string }).error]).toEqual([400, "amount: 5e-324 USD is too small to change the key's credits (unlimited), which are kept to 1e-10 USD"])
  const least = await admin(`/admin/v1/keys/${unlimited.id}/credit`, { amount: 1e-10 })
  expect([least.status, ((await least.json()) as { credits: number }).credits]).toEqual([200, 1e-10])
})
