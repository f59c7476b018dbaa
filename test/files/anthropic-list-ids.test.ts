// Anthropic's file list takes `ids` (the SDK's `files.list({ ids })`, sent as `ids[]=…`): only
// those files, in one page, the ones not found (deleted, another key's) left out. A list that
// ignored it would hand a client every file of the key where it asked for a few.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic, { toFile } from '@anthropic-ai/sdk'
import { startFilesGateway, type FilesGateway } from './helpers.ts'

let gw: FilesGateway
beforeAll(async () => {
  gw = await startFilesGateway()
})
afterAll(() => gw.stop())

const upload = async (an: Anthropic, name: string) => an.files.upload({ file: await toFile(Buffer.from(name), name) })

describe('anthropic files.list with ids', () => {
  test('only the named files of the key, in one page; deleted and foreign ids left out', async () => {
    const an = gw.anthropic()
    const [a, b, c, gone] = [await upload(an, 'a.txt'), await upload(an, 'b.txt'), await upload(an, 'c.txt'), await upload(an, 'gone.txt')]
    await an.files.delete(gone.id)
    const foreign = await upload(gw.anthropic(gw.otherKey), 'other.txt')

    const page = await an.files.list({ ids: [a.id, c.id, a.id, gone.id, foreign.id, 'file_nope'] })
    expect(page.data.map((f) => f.id).sort()).toEqual([a.id, c.id].sort())
    expect(page.next_page).toBeNull()
    expect(page.hasNextPage()).toBe(false)

    const beta = await an.beta.files.list({ ids: [b.id] })
    expect(beta.data.map((f) => f.id)).toEqual([b.id])
  })

  test('ids beside page or limit, or more than 100 of them, is a 400 naming the fields', async () => {
    const an = gw.anthropic()
    const f = await upload(an, 'x.txt')
    const cases: [Anthropic.FileListParams, RegExp][] = [
      [{ ids: [f.id], limit: 5 }, /ids.*limit/],
      [{ ids: Array.from({ length: 101 }, (_, i) => `file_${i}`) }, /ids.*100/],
    ]
    for (const [query, named] of cases) {
      const err = await an.files.list(query).then(() => null, (e: unknown) => e as { status: number; error: unknown })
      expect(err?.status).toBe(400)
      expect(JSON.stringify(err?.error)).toMatch(named)
    }
  })
})

// `scope_id` (beta.files.list) asks for the files of a scope such as a session; the gateway
// holds no sessions, so none of its files is in one: an empty page, not every file of the key.
describe('anthropic beta.files.list with scope_id', () => {
  test('an empty page', async () => {
    const an = gw.anthropic()
    await upload(an, 'scoped.txt')
    const page = await an.beta.files.list({ scope_id: 'sesn_011CZkZaBF1tNoB5wlCeusgy' })
    expect(page.data).toEqual([])
    expect(page.hasNextPage()).toBe(false)
  })
})
