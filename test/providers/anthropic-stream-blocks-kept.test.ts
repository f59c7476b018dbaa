// What the stream reader keeps per content block is bounded, as the block order's entries are
// (block-order.ts): a server that starts and stops blocks without end, each at an index of its
// own, or starts them and never stops them, made the reader keep one block for each index for
// the whole stream (up to the 1 GiB a stream may send: millions of them). Measured in a process
// of its own (test/helpers/stream-blocks-heap.ts): 300,000 blocks held 22 MB stopped and 51 MB
// never stopped before the bound, a few KB after.
import { expect, test } from 'bun:test'
import { join } from 'node:path'

test('blocks at indices of their own, stopped or never stopped: the reader keeps a bounded number', async () => {
  const p = Bun.spawn([process.execPath, join(import.meta.dir, '../helpers/stream-blocks-heap.ts')], { stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(p.stdout).text()
  expect(await p.exited).toBe(0)
  const held = JSON.parse(out.trim().split('\n').at(-1)!) as { stopped: number; open: number }
  expect(held.stopped).toBeLessThan(8 * 1024 * 1024)
  expect(held.open).toBeLessThan(8 * 1024 * 1024)
})
