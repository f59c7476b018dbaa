// The compiled binary carries the batch worker entry point (scripts/build.ts): a batch runs
// to its end through the binary alone, copied into an empty directory.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { BUN, cleanup, ROOT, spawnGateway, tempDir } from '../helpers/server.ts'

const dir = tempDir('switchyard-batch-bin-')
const bin = join(dir, 'switchyard')

beforeAll(() => {
  const build = Bun.spawnSync([BUN, join(ROOT, 'scripts/build.ts')], { stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
  copyFileSync(join(ROOT, 'dist/switchyard'), bin)
}, 120_000)
afterAll(() => cleanup(dir))

test('the binary alone runs a batch on its embedded worker pool', async () => {
  const key = 'sk-sy-binary-' + crypto.randomUUID()
  const gw = await spawnGateway({ cmd: [bin], env: { SWITCHYARD_BOOTSTRAP_KEY: key }, cwd: dir, dataDir: join(dir, 'data') })
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  try {
    const requests = [1, 2, 3].map((i) => ({ custom_id: `b${i}`, model: i === 2 ? 'mock-claude' : 'mock-gpt', messages: [{ role: 'user', content: `mock: text from the binary ${i}` }] }))
    const res = await fetch(`${gw.url}/api/v1/batches`, { method: 'POST', headers, body: JSON.stringify({ requests }) })
    expect(res.status).toBe(200)
    const id = ((await res.json()) as any).id
    let b: any
    for (let i = 0; i < 400; i++) {
      b = await (await fetch(`${gw.url}/api/v1/batches/${id}`, { headers })).json()
      if (b.output_file_id) break
      await Bun.sleep(25)
    }
    expect(b).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 3, failed: 0 } })
    const out = (await (await fetch(`${gw.url}/api/v1/files/${b.output_file_id}/content`, { headers })).text()).trim().split('\n').map((l) => JSON.parse(l))
    expect(out.map((l) => l.response.body.choices[0].message.content)).toEqual([1, 2, 3].map((i) => `from the binary ${i}`))
    expect(gw.output()).not.toContain('batch worker could not start')
  } finally {
    gw.kill('SIGTERM')
    expect(await gw.exited).toBe(0)
  }
}, 60_000)
