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
/** Where jobs go: the token worker itself, or a port to it (from a batch worker's thread). */
type Channel = Pick<BunWorker, 'postMessage' | 'ref' | 'unref'> & { onmessage: ((e: MessageEvent<TokenReply>) => void) | null }

let worker: BunWorker | null | undefined
let channel: Channel | null | undefined
let nextId = 1
const waiting = new Map<number, { resolve: (r: TokenReply) => void; reject: (e: Error) => void }>()

function failAll(why: string) {
  for (const w of waiting.values()) w.reject(new Error(why))
  waiting.clear()
  channel = null
}

function listen(c: Channel): Channel {
  c.onmessage = (e: MessageEvent<TokenReply>) => {
    const job = waiting.get(e.data.id)
    waiting.delete(e.data.id)
    if (waiting.size === 0) c.unref()
    if (!job) return
    if (e.data.error) job.reject(new Error(e.data.error))
    else job.resolve(e.data)
  }
  c.unref()
  return c
}

/**
 * Count on the calling thread from now on (tests and tools; a thread with no token worker to
 * reach).
 */
export function countOnThisThread(): void {
  if (channel === undefined) channel = null
}

/**
 * A batch worker's thread counts through the process's one token worker, over this port
 * (tokenPort() of the request thread): the tables cost tens of MiB, once per process.
 */
export function countThrough(port: MessagePort): void {
  channel = listen(port as unknown as Channel)
}

function spawnTokenWorker(): BunWorker | null {
  if (worker !== undefined) return worker
  try {
    const w = new Worker(workerUrl()) as BunWorker
    w.unref()
    w.onerror = (e) => {
      failAll(`token worker failed: ${e.message}`)
      worker = null
    }
    worker = w
  } catch {
    worker = null
  }
  return worker
}

function tokenChannel(): Channel | null {
  if (channel !== undefined) return channel
  const w = spawnTokenWorker()
  channel = w && listen(w)
  return channel
}

/** A port to this process's token worker, for another thread (countThrough), or null without one. */
export function tokenPort(): MessagePort | null {
  const w = spawnTokenWorker()
  if (!w) return null
  const ch = new MessageChannel()
  w.postMessage({ op: 'port', port: ch.port1 } satisfies TokenJob, [ch.port1])
  return ch.port2
}

/**
 * Load the tables now, in the token worker, off the request thread: a gateway reaches its
 * full size at start instead of in the middle of its first interrupted stream, where the
 * load's transient garbage (about twice the tables) would add to the load's own.
 */
export function preloadTokenizer(): void {
  void countTokensAsync('preload').catch(() => {})
}

type Job = { op: 'count'; text: string } | { op: 'truncate'; text: string; max: number }

function run(job: Job): Promise<TokenReply> | null {
  const w = tokenChannel()
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
