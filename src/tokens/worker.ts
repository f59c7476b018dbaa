// Runs in a Bun Worker: the o200k tables (hundreds of ms to load, tens of MiB) and every
// count or cut of a large text live here, so no request's tokenizing ever holds the
// request thread (issue 9, D1). Counting is the IR's bounded BPE (linear, exact for
// ordinary text, estimated past a budget).
import { ASYNC_BUDGET, countBounded, truncateBounded } from '../ir/bounded-bpe.ts'

declare const self: Worker

export type TokenJob =
  | { id: number; op: 'count'; text: string }
  | { id: number; op: 'truncate'; text: string; max: number }
  /** Another thread's line to this worker (a batch worker's): jobs come and answers go on it. */
  | { op: 'port'; port: MessagePort }
export type TokenReply = { id: number; count?: number; text?: string; cut?: boolean; error?: string }

function answer(job: Exclude<TokenJob, { op: 'port' }>): TokenReply {
  try {
    if (job.op === 'count') return { id: job.id, count: countBounded(job.text, { exact: ASYNC_BUDGET.exact }) }
    return { id: job.id, ...truncateBounded(job.text, job.max) }
  } catch (err) {
    return { id: job.id, error: String(err) }
  }
}

self.onmessage = (e: MessageEvent<TokenJob>) => {
  const job = e.data
  if (job.op !== 'port') return self.postMessage(answer(job))
  const port = job.port
  port.onmessage = (ev: MessageEvent<TokenJob>) => {
    if (ev.data.op !== 'port') port.postMessage(answer(ev.data))
  }
}
