// Token counts for the request path, from the token workers (worker.ts): the request thread
// only posts the text and awaits the answer. One worker starts with the gateway; more (up to
// the cores) start once each holds a large text, and a job goes to the one owing least.
// Each worker shares itself between keys (lanes); a key with a long queue of its own gets
// the cheap bound for its next large text instead of a place at the end of it. Should no
// worker be available, the same bounded counting runs here, giving the loop back every few ms.
import { availableParallelism } from 'node:os'
import { countBoundedAsync, roughCount, truncateBounded } from '../ir/bounded-bpe.ts'
import { emptyUsage, promptTokens, type Usage } from '../ir/types.ts'
import type { TokenJob, TokenReply } from './worker.ts'
import { startWorker } from '../lib/worker-url.ts'


/** Bun's Worker can be unref'd: an idle token worker never keeps the process alive. */
type BunWorker = Worker & { ref(): void; unref(): void }
/** Where jobs go: a token worker itself, or a port to one (from a batch worker's thread). */
type Channel = Pick<BunWorker, 'postMessage' | 'ref' | 'unref'> & { onmessage: ((e: MessageEvent<TokenReply>) => void) | null }

/** One line to a worker, with what it still owes: its jobs and their characters. */
interface Member {
  channel: Channel
  jobs: number
  chars: number
  /** The request thread's own workers (not a port to one). */
  worker?: BunWorker
  /** False while a worker started under load loads its tables: nobody's job waits for that. */
  ready: boolean
}

/** More workers start (up to the cores) only once every one holds this much text. */
const SPAWN_AT = 64 * 1024
/**
 * Past this much of its own text waiting, a key's next text gets the cheap bound at once:
 * about a second or two of counting already waits for it, and a queue must not grow without end.
 */
export const LANE_BACKLOG = 2 * 1024 * 1024

let members: Member[] | null | undefined
let maxMembers = Math.max(1, availableParallelism())
let nextId = 1
const waiting = new Map<number, { member: Member; chars: number; lane: string; resolve: (r: TokenReply) => void; reject: (e: Error) => void }>()
const laneChars = new Map<string, number>()

function settle(id: number): ReturnType<typeof waiting.get> {
  const job = waiting.get(id)
  if (!job) return undefined
  waiting.delete(id)
  job.member.jobs--
  job.member.chars -= job.chars
  if (job.member.jobs === 0) job.member.channel.unref()
  const left = (laneChars.get(job.lane) ?? 0) - job.chars
  if (left > 0) laneChars.set(job.lane, left)
  else laneChars.delete(job.lane)
  return job
}

function listen(c: Channel, worker?: BunWorker): Member {
  const member: Member = { channel: c, jobs: 0, chars: 0, worker, ready: true }
  c.onmessage = (e: MessageEvent<TokenReply>) => {
    const job = settle(e.data.id)
    if (!job) return
    if (e.data.error) job.reject(new Error(e.data.error))
    else job.resolve(e.data)
  }
  c.unref()
  return member
}

function failMember(member: Member, why: string) {
  for (const [id, job] of [...waiting]) {
    if (job.member !== member) continue
    settle(id)
    job.reject(new Error(why))
  }
  if (members) members = members.filter((m) => m !== member)
}

/**
 * Count on the calling thread from now on (tests and tools; a thread with no token worker to
 * reach).
 */
export function countOnThisThread(): void {
  if (members === undefined) members = null
}

/** How many token workers the request thread may run (server.token_workers; the cores by default). */
export function setTokenWorkers(n: number): void {
  maxMembers = Math.max(1, Math.floor(n))
}

/**
 * A batch worker's thread counts through the process's token workers, over this port
 * (tokenPort() of the request thread): the tables cost tens of MiB, once per worker.
 */
export function countThrough(port: MessagePort): void {
  members = [listen(port as unknown as Channel)]
}

function spawnTokenWorker(): Member | null {
  try {
    const w = startWorker(import.meta.url, 'tokens/worker.ts') as BunWorker
    const member = listen(w, w)
    w.onerror = (e) => failMember(member, `token worker failed: ${e.message}`)
    return member
  } catch {
    return null
  }
}

function pool(): Member[] | null {
  if (members !== undefined) return members
  const first = spawnTokenWorker()
  members = first && [first]
  return members
}

/** The member owing least; a new one starts when all owe much and the cores allow it. */
function pick(all: Member[]): Member {
  let best: Member | undefined
  for (const m of all) if (m.ready && (!best || m.chars < best.chars)) best = m
  best ??= all[0]!
  if (best.chars >= SPAWN_AT && all.length < maxMembers && best.worker) {
    const more = spawnTokenWorker()
    if (more) {
      all.push(more)
      // it loads its tables now, before it is handed work someone waits for
      more.ready = false
      post(more, { op: 'count', text: 'preload' }, '').then(
        () => (more.ready = true),
        () => {},
      )
    }
  }
  return best
}

/** A port to one of this process's token workers, for another thread (countThrough), or null without one. */
export function tokenPort(): MessagePort | null {
  const all = pool()
  const w = all?.find((m) => m.worker)?.worker
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

type Job = { op: 'count'; text: string; parts?: string[] } | { op: 'truncate'; text: string; max: number }

function post(member: Member, job: Job, lane: string): Promise<TokenReply> {
  const id = nextId++
  const chars = job.op === 'count' && job.parts ? partsLength(job.parts) : job.text.length
  return new Promise<TokenReply>((resolve, reject) => {
    waiting.set(id, { member, chars, lane, resolve, reject })
    member.jobs++
    member.chars += chars
    laneChars.set(lane, (laneChars.get(lane) ?? 0) + chars)
    // keep the process alive while an answer is owed
    member.channel.ref()
    if (job.op === 'count' && job.parts) {
      for (const text of job.parts) member.channel.postMessage({ op: 'part', id, text } satisfies TokenJob)
      member.channel.postMessage({ op: 'count', id, lane, text: '', parts: true } satisfies TokenJob)
    } else member.channel.postMessage({ ...job, id, lane } as TokenJob)
  })
}

function run(job: Job, lane: string): Promise<TokenReply> | null {
  const all = pool()
  if (!all || all.length === 0) return null
  return post(pick(all), job, lane)
}

/** Whether a key already has so much text waiting that its next large one is bounded, not counted (one alone is always counted). */
const backlogged = (lane: string, text: string) => (laneChars.get(lane) ?? 0) > LANE_BACKLOG && text.length > SPAWN_AT

const partsLength = (parts: string[]) => parts.reduce((n, p) => n + p.length, 0)

/**
 * `lane` is whose work this is (the API key's id): counting is shared fairly between lanes.
 * `text` may come in parts (their concatenation is counted): joined by the worker, off the
 * request thread, where one join of a 10 MB prompt held it 30–70 ms.
 */
export async function countTokensAsync(text: string | string[], lane = ''): Promise<number> {
  if (Array.isArray(text)) {
    const chars = partsLength(text)
    if (chars === 0) return 0
    // the parts of one whose rough count is taken, or of a short one, are joined here as before
    if (chars <= SPAWN_AT || ((laneChars.get(lane) ?? 0) > LANE_BACKLOG && chars > SPAWN_AT)) return countTokensAsync(text.join(''), lane)
    const answer = run({ op: 'count', text: '', parts: text }, lane)
    if (answer) {
      try {
        return (await answer).count ?? 0
      } catch {
        // the worker died: count here instead
      }
    }
    return countBoundedAsync(text.join(''))
  }
  if (!text) return 0
  if (backlogged(lane, text)) return roughCount(text)
  const answer = run({ op: 'count', text }, lane)
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
export async function truncateTokensAsync(text: string, max: number, lane = ''): Promise<{ text: string; cut: boolean }> {
  const answer = run({ op: 'truncate', text, max }, lane)
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
 * what was visibly produced, with the prompt counted when the upstream never said.
 * Never lower than reported.
 */
export async function billedUsage(reported: Usage, producedText: string, promptText: () => string, lane = ''): Promise<Usage> {
  const u = { ...emptyUsage(), ...reported }
  const produced = await countTokensAsync(producedText, lane)
  if (produced > u.outputTokens) u.outputTokens = produced
  if (promptTokens(u) === 0) u.inputTokens = await countTokensAsync(promptText(), lane)
  return u
}

/** billedUsage at the cheap bound, at once: for a record that cannot wait for the workers (a stop). */
export function roughBilledUsage(reported: Usage, producedText: string, promptText: () => string): Usage {
  const u = { ...emptyUsage(), ...reported }
  const produced = roughCount(producedText)
  if (produced > u.outputTokens) u.outputTokens = produced
  if (promptTokens(u) === 0) u.inputTokens = roughCount(promptText())
  return u
}
