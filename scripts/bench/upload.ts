// Upload benchmark: a 500 MiB multipart upload streamed from a generator (the client never
// holds the file either) to a gateway subprocess, downloaded back and compared by SHA-256,
// while the gateway's resident memory is watched in /proc.
//
//   bun scripts/bench/upload.ts [--mib 500]
//
// Prints idle RSS, peak RSS (VmHWM) and throughput. Target: peak < idle + 128 MiB.
import { parseArgs } from 'node:util'
import { spawnGateway } from '../../test/helpers/server.ts'
import { memory } from './proc.ts'

const MiB = 1024 * 1024
const CHUNK = 256 * 1024

/**
 * A multipart body with one `file` part of `bytes` pseudo-random bytes (and `purpose`),
 * produced chunk by chunk as the reader pulls; `sha256()` is the file's digest once read.
 */
export function multipartUpload(bytes: number, opts: { filename?: string; purpose?: string; onChunk?: (sent: number) => void | Promise<void> } = {}) {
  const boundary = `sy-bench-${crypto.randomUUID()}`
  const hasher = new Bun.CryptoHasher('sha256')
  // one random block, varied per chunk, so nothing along the way can compress or dedupe it
  const block = crypto.getRandomValues(new Uint8Array(CHUNK))
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${opts.purpose ?? 'batch'}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${opts.filename ?? 'big.bin'}"\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  let sent = 0
  let n = 0
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(head)
    },
    async pull(c) {
      if (sent >= bytes) {
        c.enqueue(tail)
        return c.close()
      }
      const size = Math.min(CHUNK, bytes - sent)
      const chunk = block.slice(0, size)
      new DataView(chunk.buffer).setUint32(0, n++)
      hasher.update(chunk)
      sent += size
      c.enqueue(chunk)
      await opts.onChunk?.(sent)
    },
  })
  return {
    stream,
    contentType: `multipart/form-data; boundary=${boundary}`,
    sha256: () => hasher.digest('hex'),
  }
}

/** SHA-256 and length of a body, read as a stream. */
export async function streamDigest(body: ReadableStream<Uint8Array>): Promise<{ sha256: string; bytes: number }> {
  const hasher = new Bun.CryptoHasher('sha256')
  let bytes = 0
  for await (const chunk of body) {
    hasher.update(chunk)
    bytes += chunk.byteLength
  }
  return { sha256: hasher.digest('hex'), bytes }
}

async function main() {
  const { values } = parseArgs({ options: { mib: { type: 'string', default: '500' } } })
  const size = Number(values.mib) * MiB
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const gw = await spawnGateway({ env: { SWITCHYARD_BOOTSTRAP_KEY: key, SWITCHYARD_LOG_LEVEL: 'warn' }, args: ['--log-level', 'warn'] })
  const pid = gw.proc.pid
  const auth = { authorization: `Bearer ${key}` }
  try {
    // warm the routes once so that idle means "ready to serve", not "just started"
    await fetch(`${gw.url}/api/v1/files`, { headers: auth }).then((r) => r.arrayBuffer())
    await Bun.sleep(500)
    const idle = memory(pid)
    let peakSampled = idle.rssMiB
    const sampler = setInterval(() => (peakSampled = Math.max(peakSampled, memory(pid).rssMiB)), 50)

    const up = multipartUpload(size)
    const t0 = performance.now()
    const res = await fetch(`${gw.url}/api/v1/files`, {
      method: 'POST',
      headers: { ...auth, 'content-type': up.contentType },
      body: up.stream,
      // @ts-expect-error streamed request body
      duplex: 'half',
    })
    const file = (await res.json()) as { id: string; bytes: number; error?: string }
    if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${file.error}`)
    const t1 = performance.now()
    const dl = await fetch(`${gw.url}/api/v1/files/${file.id}/content`, { headers: auth })
    const got = await streamDigest(dl.body!)
    const t2 = performance.now()
    clearInterval(sampler)
    const after = memory(pid)

    const ok = got.sha256 === up.sha256() && got.bytes === size && file.bytes === size
    const peakAbove = after.hwmMiB - idle.rssMiB
    const r = (x: number) => Math.round(x * 10) / 10
    console.log(
      JSON.stringify(
        {
          size_mib: size / MiB,
          sha256_match: ok,
          upload_s: r((t1 - t0) / 1000),
          upload_mib_s: r(size / MiB / ((t1 - t0) / 1000)),
          download_s: r((t2 - t1) / 1000),
          download_mib_s: r(size / MiB / ((t2 - t1) / 1000)),
          gateway_idle_rss_mib: r(idle.rssMiB),
          gateway_peak_rss_mib: r(after.hwmMiB),
          gateway_peak_sampled_rss_mib: r(peakSampled),
          gateway_peak_above_idle_mib: r(peakAbove),
          target_mib: 128,
          within_target: peakAbove < 128,
        },
        null,
        2,
      ),
    )
    if (!ok || peakAbove >= 128) process.exitCode = 1
  } finally {
    gw.kill('SIGTERM')
    await gw.exited
    const { rmSync } = await import('node:fs')
    rmSync(gw.dataDir, { recursive: true, force: true })
  }
}

if (import.meta.main) await main()
