// Runs in a Bun Worker: the exports' gzip and ZIP streams (deflate-streams.ts), each step's bytes
// compressed here. Four ZIP exports of 50,000 results compressed on the request
// thread held it (and /health) about 0.7 s on 2 busy cores.
import { DeflateStream, type DeflateStep } from './deflate-streams.ts'

declare const self: Worker

/** `open` a stream of `kind`, a `step` of one, or `close` it (done or given up). */
export type DeflateJob = { n: number; id: number } & ({ op: 'open'; kind: 'gzip' | 'zip' } | { op: 'close' } | { op: 'step'; step: DeflateStep })
/** The answer to job `n`: the bytes it made, or why it failed. */
export type DeflateReply = { n: number; made?: Uint8Array[]; error?: string }

const streams = new Map<number, DeflateStream>()

function answer(job: DeflateJob): Uint8Array[] {
  if (job.op === 'open') streams.set(job.id, new DeflateStream(job.kind))
  else if (job.op === 'close') streams.delete(job.id)
  else {
    const s = streams.get(job.id)
    if (!s) throw new Error(`no deflate stream ${job.id}`)
    return s.step(job.step)
  }
  return []
}

self.onmessage = (e: MessageEvent<DeflateJob>) => {
  try {
    self.postMessage({ n: e.data.n, made: answer(e.data) } satisfies DeflateReply)
  } catch (err) {
    streams.delete(e.data.id)
    self.postMessage({ n: e.data.n, error: err instanceof Error ? err.message : String(err) } satisfies DeflateReply)
  }
}
