// Runs in a Bun Worker: the o200k tables (hundreds of ms to load, tens of MiB) and every
// count or cut of a large text live here, so no request's tokenizing ever holds the
// request thread (issue 9, D1). Counting is the IR's bounded BPE (linear, exact for
// ordinary text, estimated past a budget).
import { ASYNC_BUDGET, countBounded, truncateBounded } from '../ir/bounded-bpe.ts'

declare const self: Worker

export type TokenJob = { id: number; op: 'count'; text: string } | { id: number; op: 'truncate'; text: string; max: number }
export type TokenReply = { id: number; count?: number; text?: string; cut?: boolean; error?: string }

self.onmessage = (e: MessageEvent<TokenJob>) => {
  const job = e.data
  try {
    if (job.op === 'count') self.postMessage({ id: job.id, count: countBounded(job.text, { exact: ASYNC_BUDGET.exact }) } satisfies TokenReply)
    else self.postMessage({ id: job.id, ...truncateBounded(job.text, job.max) } satisfies TokenReply)
  } catch (err) {
    self.postMessage({ id: job.id, error: String(err) } satisfies TokenReply)
  }
}
