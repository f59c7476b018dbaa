// Token counts for the request path, from the token worker (worker.ts): the request thread
// only posts the text and awaits the answer. Should the worker be unavailable, the same
// bounded counting runs here, in slices that give the loop back every few ms.
import { countBoundedAsync, truncateBounded } from '../ir/bounded-bpe.ts'
import { emptyUsage, type Usage } from '../ir/types.ts'
import type { TokenJob, TokenReply } from './worker.ts'

/**
 * From source, the worker sits beside this file. In the compiled binary every bundled
 * module has the executable's URL, and the worker entry point is embedded at its path
 * below the bundle root (src/): `tokens/worker`.
 */
function workerUrl(): string {
  return import.meta.url.includes('/$bunfs/') ? new URL('./tokens/worker.ts', import.meta.url).href : new URL('./worker.ts', import.meta.url).href
}

/** Bun's Worker can be unref'd: an idle token worker never keeps the process alive. */
type BunWorker = Worker & { ref(): void; unref(): void }

let worker: BunWorker | null | undefined
let nextId = 1
const waiting = new Map<number, { resolve: (r: TokenReply) => void; reject: (e: Error) => void }>()

function failAll(why: string) {
  for (const w of waiting.values()) w.reject(new Error(why))
  waiting.clear()
  worker = null
}

/**
 * Count on the calling thread from now on: a batch worker is already off the request loop,
 * and a token worker of its own would only load the tables a second time.
 */
export function countOnThisThread(): void {
  if (worker === undefined) worker = null
}

function tokenWorker(): BunWorker | null {
  if (worker !== undefined) return worker
  try {
    const w = new Worker(workerUrl()) as BunWorker
    w.onmessage = (e: MessageEvent<TokenReply>) => {
      const job = waiting.get(e.data.id)
      waiting.delete(e.data.id)
      if (waiting.size === 0) w.unref()
      if (!job) return
      if (e.data.error) job.reject(new Error(e.data.error))
      else job.resolve(e.data)
    }
    w.onerror = (e) => failAll(`token worker failed: ${e.message}`)
    w.unref()
    worker = w
  } catch {
    worker = null
  }
  return worker
}

type Job = { op: 'count'; text: string } | { op: 'truncate'; text: string; max: number }

function run(job: Job): Promise<TokenReply> | null {
  const w = tokenWorker()
  if (!w) return null
  const id = nextId++
  return new Promise<TokenReply>((resolve, reject) => {
    waiting.set(id, { resolve, reject })
    // keep the process alive while an answer is owed
    w.ref()
    w.postMessage({ ...job, id } as TokenJob)
  })
}

export async function countTokensAsync(text: string): Promise<number> {
  if (!text) return 0
  const answer = run({ op: 'count', text })
  if (answer) {
    try {
      return (await answer).count ?? 0
    } catch {
      // the worker died: count here instead
    }
  }
  return countBoundedAsync(text)
}

/** `text` cut to at most `max` tokens. */
export async function truncateTokensAsync(text: string, max: number): Promise<{ text: string; cut: boolean }> {
  const answer = run({ op: 'truncate', text, max })
  if (answer) {
    try {
      const r = await answer
      return { text: r.text ?? '', cut: r.cut === true }
    } catch {
      // the worker died: cut here instead
    }
  }
  return truncateBounded(text, max)
}

/**
 * Usage to bill for a stream that ended early: what the upstream reported, raised to
 * what was visibly produced, with the prompt counted when the upstream never said
 * (pitfall 14). Never lower than reported.
 */
export async function billedUsage(reported: Usage, producedText: string, promptText: () => string): Promise<Usage> {
  const u = { ...emptyUsage(), ...reported }
  const produced = await countTokensAsync(producedText)
  if (produced > u.outputTokens) u.outputTokens = produced
  if (u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens === 0) u.inputTokens = await countTokensAsync(promptText())
  return u
}
