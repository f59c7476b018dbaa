// Runs in a Bun Worker: the o200k tables (hundreds of ms to load, tens of MiB) and every
// count or cut of a large text live here, so no request's tokenizing ever holds the
// request thread. Counting is the IR's bounded BPE (linear, exact for
// ordinary text, estimated past a budget).
//
// The worker is shared fairly: jobs queue per lane (the API key they are for), and the
// worker runs one slice (about half a millisecond) of each lane's first job in turn, taking
// new jobs between rounds; a short text is answered as it arrives. One key's ten 1 MB
// prompts then cost another key's small count one slice at most, not the ten counts.
import { lowerThreadPriority } from '../lib/priority.ts'
import { boundHeap } from '../lib/heap-bound.ts'
import { ASYNC_BUDGET, countSteps, finish, truncateSteps } from '../ir/bounded-bpe.ts'

declare const self: Worker

// counting is background work: the request thread gets the CPU first
lowerThreadPriority()
// short counts' garbage collected as it grows (lib/heap-bound.ts)
boundHeap()

export type TokenJob =
  /**
   * `parts`: its text came before it in `part` messages of the same id, joined here (a long
   * prompt's one join held the request thread 30–70 ms). Each part is a message of its own: a
   * message of flat fields is passed without a copy, one holding an array is copied whole.
   */
  | { id: number; op: 'count'; text: string; parts?: true; lane?: string }
  | { id: number; op: 'part'; text: string }
  | { id: number; op: 'truncate'; text: string; max: number; lane?: string }
  /** Another thread's line to this worker (a batch worker's): jobs come and answers go on it. */
  | { op: 'port'; port: MessagePort }
export type TokenReply = { id: number; count?: number; text?: string; cut?: boolean; error?: string }

type Work = Exclude<TokenJob, { op: 'port' } | { op: 'part' }>

/** The parts of texts sent in parts, by job id, until their count arrives. */
const parts = new Map<number, string[]>()
interface Running {
  steps: Generator<void, Omit<TokenReply, 'id'>>
  id: number
  answer: (r: TokenReply) => void
}

/** The async budget, cut here into slices of about half a millisecond: a job that arrives waits about one. */
const BUDGET = { ...ASYNC_BUDGET, slice: 1_000 }

function* stepsOf(job: Work): Generator<void, Omit<TokenReply, 'id'>> {
  if (job.op === 'count') return { count: yield* countSteps(job.text, BUDGET) }
  return yield* truncateSteps(job.text, job.max, BUDGET.slice)
}

/** Lanes in arrival order, each with its jobs in arrival order. */
const lanes = new Map<string, Running[]>()
let pumping = false

/** A text this short costs a slice or two at most: it is answered as it arrives, ahead of every queue. */
const SHORT = 2 * 1024

function take(job: Exclude<TokenJob, { op: 'port' }>, answer: (r: TokenReply) => void) {
  if (job.op === 'part') {
    const got = parts.get(job.id)
    if (got) got.push(job.text)
    else parts.set(job.id, [job.text])
    return
  }
  if (job.op === 'count' && job.parts) {
    job.text = (parts.get(job.id) ?? []).join('')
    parts.delete(job.id)
  }
  if (job.text.length <= SHORT) return answer(runWhole(job))
  const lane = job.lane ?? ''
  const q = lanes.get(lane)
  const run: Running = { steps: stepsOf(job), id: job.id, answer }
  if (q) q.push(run)
  else lanes.set(lane, [run])
  if (!pumping) {
    pumping = true
    setImmediate(pump)
  }
}

function runWhole(job: Work): TokenReply {
  try {
    return { id: job.id, ...finish(stepsOf(job)) }
  } catch (err) {
    return { id: job.id, error: String(err) }
  }
}

/** One round: a slice of each lane's first job; then the loop turns, so new jobs get in. */
function pump() {
  for (const [lane, q] of [...lanes]) {
    const run = q[0]!
    let reply: TokenReply | undefined
    try {
      const r = run.steps.next()
      if (r.done) reply = { id: run.id, ...r.value }
    } catch (err) {
      reply = { id: run.id, error: String(err) }
    }
    if (!reply) continue
    q.shift()
    if (q.length === 0) lanes.delete(lane)
    run.answer(reply)
  }
  if (lanes.size > 0) setImmediate(pump)
  else pumping = false
}

self.onmessage = (e: MessageEvent<TokenJob>) => {
  const job = e.data
  if (job.op !== 'port') return take(job, (r) => self.postMessage(r))
  const port = job.port
  port.onmessage = (ev: MessageEvent<TokenJob>) => {
    if (ev.data.op !== 'port') take(ev.data, (r) => port.postMessage(r))
  }
}
