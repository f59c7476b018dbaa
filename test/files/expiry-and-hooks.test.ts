// Expired files read as missing at once and are pruned in the background; deleting a file
// tells the registered hooks (batches use them) before the delete answers.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { toFile } from 'openai'
import type { FileRecord } from '../../src/files/types.ts'
import { blobKeyOf, hasBlob } from '../helpers/blobs.ts'
import { startFilesGateway, status, type FilesGateway } from './helpers.ts'

let gw: FilesGateway
beforeAll(async () => {
  gw = await startFilesGateway()
})
afterAll(() => gw.stop())

const upload = async (name: string, expiresAfter?: number) =>
  gw.openai().files.create({
    file: await toFile(Buffer.from(name), name),
    purpose: 'batch',
    ...(expiresAfter ? { expires_after: { anchor: 'created_at' as const, seconds: expiresAfter } } : {}),
  })

/** Moves a file's expiry into the past, as if its time had come. */
const expireNow = (id: string) => gw.services.storage.sql.run('UPDATE files SET expires_at = ? WHERE id = ?', [Date.now() - 1, id])

test('an expired file is missing on every route and from lists, then pruned with its bytes', async () => {
  const f = await upload('soon.jsonl', 3600)
  const keep = await upload('keep.jsonl')
  // the bytes, asked of the blob store itself (the data dir's disk, or S3)
  const blob = await blobKeyOf(gw, f.id)
  expect(await hasBlob(gw, blob)).toBe(true)
  const heard: [string, string][] = []
  const off = gw.services.files.onFileDeleted((file, reason) => void heard.push([file.id, reason]))
  try {
    await expireNow(f.id)
    const oa = gw.openai()
    expect(await status(oa.files.retrieve(f.id))).toBe(404)
    expect(await status(oa.files.content(f.id))).toBe(404)
    expect(await status(gw.anthropic().beta.files.retrieveMetadata(f.id))).toBe(404)
    // deleting it is a 404 too: it is already gone to its owner (the pruner takes its bytes)
    expect(await status(oa.files.delete(f.id))).toBe(404)
    expect(await status(gw.anthropic().beta.files.delete(f.id))).toBe(404)
    const ids = (await oa.files.list()).data.map((x) => x.id)
    expect(ids).toContain(keep.id)
    expect(ids).not.toContain(f.id)

    expect(await gw.services.files.pruneExpired()).toBe(1)
    expect(await hasBlob(gw, blob)).toBe(false)
    expect(await gw.services.storage.sql.get('SELECT count(*) AS n FROM files WHERE id = ?', [f.id])).toEqual({ n: 0 })
    expect(heard).toEqual([[f.id, 'expired']])
    expect(await (await oa.files.content(keep.id)).text()).toBe('keep.jsonl')
  } finally {
    off()
  }
})

test('delete awaits the deletion hooks before answering, then the bytes are gone', async () => {
  const f = await upload('input.jsonl')
  const blob = await blobKeyOf(gw, f.id)
  expect(await hasBlob(gw, blob)).toBe(true)
  const events: string[] = []
  const off = gw.services.files.onFileDeleted(async (file: FileRecord, reason) => {
    // a batches hook fails the batches that read this file; make it take a while
    await Bun.sleep(50)
    events.push(`hook ${file.id} ${reason} ${file.purpose}`)
  })
  const failing = gw.services.files.onFileDeleted(() => {
    throw new Error('a broken hook does not stop the delete')
  })
  try {
    const del = await gw.openai().files.delete(f.id)
    events.push('answered')
    expect(del.deleted).toBe(true)
    expect(events).toEqual([`hook ${f.id} deleted batch`, 'answered'])
    expect(await hasBlob(gw, blob)).toBe(false)
  } finally {
    off()
    failing()
  }
})

test('the background pruner runs on its own timer', async () => {
  const f = await upload('timer.jsonl', 3600)
  await expireNow(f.id)
  const onClose: (() => void | Promise<void>)[] = []
  gw.services.files.start(onClose, 20)
  try {
    const row = () => gw.services.storage.sql.get('SELECT 1 AS one FROM files WHERE id = ?', [f.id])
    for (let i = 0; i < 100 && (await row()); i++) await Bun.sleep(10)
    expect(await row()).toBeNull()
  } finally {
    for (const c of onClose) await c()
  }
})

// a batch reading a file fails when the file is removed: at its expiry, not up to a minute later
// (the regular pass runs every minute), while the batch ran on and billed its items
test('a file made with an expiry is removed when it expires, its hooks told then', async () => {
  const heard: string[] = []
  const off = gw.services.files.onFileDeleted((file, reason) => void heard.push(`${file.id} ${reason}`))
  try {
    const res = await fetch(`${gw.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: 'brief', filename: 'brief.txt', expires_in_seconds: 1 }) })
    const { id } = (await res.json()) as { id: string }
    const row = () => gw.services.storage.sql.get('SELECT 1 AS one FROM files WHERE id = ?', [id])
    expect(await row()).not.toBeNull()
    for (let i = 0; i < 60 && (await row()); i++) await Bun.sleep(50)
    expect(await row()).toBeNull()
    // (the files the tests before left expired may be pruned meanwhile: heard too, not this one's)
    expect(heard.filter((h) => h.startsWith(`${id} `))).toEqual([`${id} expired`])
  } finally {
    off()
  }
})

