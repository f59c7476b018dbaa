// The measurement the long-stream experiments share: warm a relay with a few short streams,
// open N long ones, and read its CPU per relayed chunk over the plateau and its RSS per open stream.
import type { Call } from '../call.ts'
import { LeanClient, rawRequest } from '../lean-client.ts'
import { cpuSeconds, memory, threadCpuByName } from '../proc.ts'
import { pinSelf, spawnUpstream } from '../processes.ts'

/**
 * What the long-stream experiments set up alike: this process on core 0, the fake upstream there
 * answering 200 chunks 50 ms apart, a key, Bun's fetch limit above `n`, and the lean client.
 */
export async function longStreamRig(n: number) {
  pinSelf(0)
  const up = await spawnUpstream(0, { UPSTREAM_STREAM_CHUNKS: '200', UPSTREAM_STREAM_GAP_MS: '50' })
  const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
  const limit = { BUN_CONFIG_MAX_HTTP_REQUESTS: String(n + 1024) }
  return { up, key, limit, client: new LeanClient() }
}

export interface Held {
  usPerChunk: number
  /** Chunks each open stream received a second over the window (the upstream sends 20). */
  chunksPerStreamS: number
  /** Connect → first response byte of the long streams, ms (they open over a ramp of about 0.5 s). */
  firstByteP50: number
  firstByteP99: number
  kibPerStream: number
  /** CPU a relayed chunk by thread name, µs (the JS thread is `bun` or `bun.exe`). */
  usPerChunkByThread: Record<string, number>
  idleMiB: number
  openMiB: number
}

/** `n` streams of `call` on the process `pid`: measured `settleMs` after they are open, over `windowMs`; resolves once they have ended. */
export async function heldStreams(client: LeanClient, call: Call, pid: number, n: number, opts = { settleMs: 2500, windowMs: 4000 }): Promise<Held> {
  const req = rawRequest(call)
  await Promise.all(Array.from({ length: 50 }, () => client.stream(call, req, '', 1000)))
  await Bun.sleep(1000)
  const idleMiB = memory(pid).rssMiB
  const all = []
  for (let i = 0; i < n; i++) {
    all.push(client.stream(call, req, '', 60_000))
    if (i % 100 === 99) await Bun.sleep(50)
  }
  await Bun.sleep(opts.settleMs)
  const c0 = cpuSeconds(pid)
  const t0 = threadCpuByName(pid)
  const k0 = client.chunks
  await Bun.sleep(opts.windowMs)
  const chunks = client.chunks - k0
  const usPerChunk = ((cpuSeconds(pid) - c0) * 1e6) / chunks
  const usPerChunkByThread: Record<string, number> = {}
  for (const [name, v] of Object.entries(threadCpuByName(pid))) usPerChunkByThread[name] = ((v - (t0[name] ?? 0)) * 1e6) / chunks
  const openMiB = memory(pid).rssMiB
  const ttfb = (await Promise.all(all)).map((x) => x.ttfb).sort((a, b) => a - b)
  const at = (q: number) => ttfb[Math.min(ttfb.length - 1, Math.floor(q * ttfb.length))] ?? NaN
  return { usPerChunk, firstByteP50: at(0.5), firstByteP99: at(0.99), chunksPerStreamS: chunks / n / (opts.windowMs / 1000), kibPerStream: ((openMiB - idleMiB) * 1024) / n, usPerChunkByThread, idleMiB, openMiB }
}

/** The CPU a chunk of the process's JS thread (named for the executable: `bun` or `bun.exe`). */
export const jsThread = (h: Held): number => (h.usPerChunkByThread['bun'] ?? 0) + (h.usPerChunkByThread['bun.exe'] ?? 0)
