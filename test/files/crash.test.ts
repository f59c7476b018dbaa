// kill -9 in the middle of an upload, restart on the same data dir: no record, no stray file.
import { expect, test } from 'bun:test'
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { multipartUpload } from '../../scripts/bench/upload.ts'
import { cleanup, spawnGateway, tempDir } from '../helpers/server.ts'
import { filesUnder } from './helpers.ts'

const MiB = 1024 * 1024

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000) {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

test('a crash mid-upload leaves nothing behind after a restart', async () => {
  const dataDir = tempDir()
  const key = 'sk-sy-crash-' + crypto.randomUUID().replaceAll('-', '')
  const env = { SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_LOG_LEVEL: 'info' }
  const blobs = join(dataDir, 'blobs')
  try {
    const first = await spawnGateway({ env, dataDir })
    // a 256 MiB upload that stalls after 16 MiB, so the process dies with it half written
    let release!: () => void
    const stalled = new Promise<void>((r) => (release = r))
    const up = multipartUpload(256 * MiB, { onChunk: (sent) => (sent >= 16 * MiB ? stalled : undefined) })
    const upload = fetch(`${first.url}/api/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': up.contentType },
      body: up.stream,
      // @ts-expect-error streamed request body
      duplex: 'half',
    }).then(
      (r) => r.status,
      () => 'connection lost',
    )
    const partial = async () => (await filesUnder(blobs)).filter((f) => f.startsWith('.tmp/') && f.endsWith('.part'))
    await until('a partial upload on disk', async () => {
      const parts = await partial()
      return parts.length === 1 && statSync(join(blobs, parts[0])).size > 8 * MiB
    })

    // also what a crash between the rename and the record leaves: bytes with no record
    const orphan = join(blobs, 'ab', 'ab' + '0'.repeat(30))
    mkdirSync(join(blobs, 'ab'), { recursive: true })
    writeFileSync(orphan, 'no record points here')
    const past = new Date(Date.now() - 60_000)
    utimesSync(orphan, past, past)

    first.kill('SIGKILL')
    expect(await first.exited).not.toBe(0)
    release()
    expect(await upload).toBe('connection lost')
    expect((await partial()).length).toBe(1)

    const second = await spawnGateway({ env, dataDir })
    try {
      await until('the start-up sweep', async () => (await filesUnder(blobs)).length === 0)
      expect(existsSync(orphan)).toBe(false)
      const list = await (await fetch(`${second.url}/api/v1/files`, { headers: { authorization: `Bearer ${key}` } })).json()
      expect(list).toMatchObject({ data: [], has_more: false })
      expect(await second.waitForOutput('removed unfinished uploads')).toContain('removed unfinished uploads')

      // and the store still works after the sweep
      const form = new FormData()
      form.append('file', new Blob(['after the crash']), 'ok.txt')
      const res = await fetch(`${second.url}/api/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })
      expect(res.status).toBe(200)
      expect((await filesUnder(blobs)).length).toBe(1)
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    cleanup(dataDir)
  }
}, 60_000)
