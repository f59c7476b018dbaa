// A key's room for files holds across a kill -9: the process killed the moment an upload's
// record is stored (a test hook) never leaves, after a restart, a file the client had no id for
// that takes the key past limits.key_file_bytes. The quota check and the record are one step.
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { cleanup, spawnGateway, tempDir } from '../helpers/server.ts'
import { filesUnder } from './helpers.ts'

const QUOTA = 64 * 1024
const SIZE = 40 * 1024
const B = 'quota-kill-boundary'

const form = (name: string, size: number) => {
  const f = new FormData()
  f.append('purpose', 'batch')
  f.append('file', new Blob([new Uint8Array(size).fill(97)]), name)
  return f
}

async function until(what: string, ok: () => Promise<boolean>) {
  for (const deadline = Date.now() + 10_000; !(await ok()); await Bun.sleep(20)) if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
}

test('two uploads at once that fit alone, not together, killed -9 as the second is stored: after a restart the key keeps only what fits', async () => {
  const dataDir = tempDir()
  const blobs = join(dataDir, 'blobs')
  const key = 'sk-sy-quota-' + crypto.randomUUID().replaceAll('-', '')
  const env = { SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_KEY_FILE_BYTES: String(QUOTA), SWITCHYARD_TEST_KILL_AFTER_FILE_RECORD: 'over.jsonl' }
  const auth = { authorization: `Bearer ${key}` }
  let overStatus: number | string | undefined
  try {
    const first = await spawnGateway({ env, dataDir })
    try {
      // the second upload begins while the key has nothing: it fits the room it sees then
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      const half = new Uint8Array(SIZE / 2).fill(98)
      let step = 0
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (step === 0) c.enqueue(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="over.jsonl"\r\n\r\n`))
          else if (step === 1) c.enqueue(half)
          else if (step === 2) {
            await held
            c.enqueue(half)
          } else if (step === 3) c.enqueue(Buffer.from(`\r\n--${B}--\r\n`))
          else c.close()
          step++
        },
      })
      const over = fetch(`${first.url}/api/v1/files`, {
        method: 'POST',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${B}` },
        body,
        // @ts-expect-error Bun/undici option for streamed request bodies
        duplex: 'half',
      }).then(
        (r) => r.status,
        () => 'connection lost',
      )
      await until('the second upload half stored', async () => (await filesUnder(blobs)).some((f) => f.startsWith('.tmp/')))
      // meanwhile the first is stored whole
      const fits = await fetch(`${first.url}/api/v1/files`, { method: 'POST', headers: auth, body: form('fits.jsonl', SIZE) })
      expect(fits.status).toBe(200)
      release()
      overStatus = await over
    } finally {
      first.kill('SIGKILL')
      await first.exited
    }
    const second = await spawnGateway({ env: { ...env, SWITCHYARD_TEST_KILL_AFTER_FILE_RECORD: '' }, dataDir })
    try {
      const list = (await (await fetch(`${second.url}/api/v1/files`, { headers: auth })).json()) as { data: { filename: string }[] }
      expect(list.data.map((f) => f.filename)).toEqual(['fits.jsonl'])
      // and no bytes of the refused one are left once the start-up sweep has run
      await until('the start-up sweep', async () => (await filesUnder(blobs)).length === 1).catch(() => {})
      expect(await filesUnder(blobs)).toHaveLength(1)
      // refused in the step that would store it: no record of it ever, so the hook (which kills
      // once such a record is stored) never fired and the client was told
      expect(overStatus).toBe(413)
    } finally {
      second.kill('SIGTERM')
      await second.exited
    }
  } finally {
    cleanup(dataDir)
  }
}, 60_000)
