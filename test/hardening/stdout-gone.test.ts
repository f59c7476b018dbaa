// The gateway's log goes to stdout, often a pipe to a shipper or `| tee`. When the reader goes
// away (EPIPE) or the log's disk fills, a write fails: the lines are lost, never the process.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dir = mkdtempSync(join(tmpdir(), 'sy-stdout-'))
const KEY = 'sk-sy-stdout-0123456789abcdef'
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('stdout closed by its reader: requests are still answered, and /health', async () => {
  // port 0: the system gives a free one (a port picked at random may be another test's), read from the banner
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, '../../src/main.ts'), 'serve', '--port', '0'], {
    env: { ...process.env, SWITCHYARD_DATA_DIR: join(dir, 'data'), SWITCHYARD_BOOTSTRAP_KEY: KEY, SWITCHYARD_LOG_LEVEL: 'info' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  try {
    // the lines up to the banner are read, then the reader goes away, as `serve | head -1`
    const reader = proc.stdout.getReader()
    let out = ''
    // a cold start (every module compiled, the database made) on a loaded 2-core machine may take seconds
    for (const until = Date.now() + 30_000; !/listening on http:\/\/\S+/.test(out) && Date.now() < until; ) {
      const { done, value } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    await reader.cancel()
    const port = /listening on http:\/\/[^\s:]+:(\d+)/.exec(out)?.[1]
    if (!port) throw new Error(`the gateway did not start: ${out}\n${await new Response(proc.stderr).text()}`)
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200)
    expect(proc.exitCode).toBeNull()
    // each request logs a line: the writes fail from here on
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/alpha/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: `hi ${i}` }] }),
      })
      expect(res.status).toBe(200)
      await Bun.sleep(60) // past the log's 50 ms coalescing, so each batch of lines is written
    }
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200)
    expect(proc.exitCode).toBeNull()
  } finally {
    proc.kill()
    await proc.exited
  }
})
