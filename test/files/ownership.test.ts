// A file is visible only to the key that uploaded it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { toFile } from 'openai'
import { startFilesGateway, status, type FilesGateway } from './helpers.ts'

let gw: FilesGateway
let mine: string
let bytesBefore: string
beforeAll(async () => {
  gw = await startFilesGateway()
  mine = (await gw.openai().files.create({ file: await toFile(Buffer.from('secret'), 's.txt'), purpose: 'batch' })).id
  bytesBefore = 'secret'
})
afterAll(() => gw.stop())

const ROOTS = ['/api/v1/files', '/api/alpha/v1/files', '/api/beta/v1/files']

describe('another key', () => {
  for (const root of ROOTS) {
    for (const [method, suffix] of [['GET', ''], ['GET', '/content'], ['DELETE', '']] as const) {
      test(`${method} ${root}/{id}${suffix} → 404`, async () => {
        const res = await fetch(`${gw.url}${root}/${mine}${suffix}`, { method, headers: { authorization: `Bearer ${gw.otherKey}` } })
        expect(res.status).toBe(404)
        expect(await res.json()).toEqual({ error: `No such file: ${mine}` })
      })
    }
    test(`GET ${root} never lists it, and its id is no cursor for them`, async () => {
      const auth = { authorization: `Bearer ${gw.otherKey}` }
      const list = await (await fetch(`${gw.url}${root}`, { headers: auth })).json()
      expect(list.data.map((f: { id: string }) => f.id)).not.toContain(mine)
      const cursor = root.includes('beta') ? 'after_id' : 'after'
      const res = await fetch(`${gw.url}${root}?${cursor}=${mine}`, { headers: auth })
      expect(res.status).toBe(400)
      expect((await res.json()).error).toBe(`${cursor}: no file ${mine}`)
    })
  }

  test('the SDKs get 404 too, and the owner still has the file afterwards', async () => {
    const theirs = gw.openai('v1', gw.otherKey)
    expect(await status(theirs.files.retrieve(mine))).toBe(404)
    expect(await status(theirs.files.content(mine))).toBe(404)
    expect(await status(theirs.files.delete(mine))).toBe(404)
    const an = gw.anthropic(gw.otherKey)
    expect(await status(an.beta.files.retrieveMetadata(mine))).toBe(404)
    expect(await status(an.beta.files.download(mine))).toBe(404)
    expect(await status(an.beta.files.delete(mine))).toBe(404)
    expect(await (await gw.openai().files.content(mine)).text()).toBe(bytesBefore)
  })

  test('the files service resolves a file id only for its owner (generation surfaces use this)', async () => {
    const owner = (await gw.services.keys.list()).find((k) => k.name === 'bootstrap')!
    const other = (await gw.services.keys.list()).find((k) => k.name === 'other')!
    const rec = await gw.services.files.resolveForKey(mine, owner)
    expect(rec?.id).toBe(mine)
    expect(Buffer.from((await gw.services.files.bytes(rec!))!).toString()).toBe('secret')
    expect(await gw.services.files.resolveForKey(mine, other)).toBeNull()
    expect(await gw.services.files.resolveForKey('file-unknown', owner)).toBeNull()
  })

  test('no key at all → 401 on every files route', async () => {
    for (const root of ROOTS) {
      expect((await fetch(`${gw.url}${root}`)).status).toBe(401)
      expect((await fetch(`${gw.url}${root}/${mine}/content`)).status).toBe(401)
    }
  })
})
