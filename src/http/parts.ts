// Bodies that may hold more parts than a generation body may (MAX_BODY_NODES objects and
// arrays, MAX_BODY_STRINGS strings and keys) are checked by a worker before the request thread
// parses them. Counting `{` and `[` characters, and `"` characters (two a string), is a bound
// from above (some may sit inside strings, or be escaped) found at memchr speed, so nearly every
// body skips the worker; a body past it is parsed there first, and only parsed here once it is
// known to keep the rules. So a million tiny parts or keys cost the request thread a scan, not a
// parse.
import { workerUrl } from '../lib/worker-url.ts'
import { HttpError } from './errors.ts'
import type { PartsJob, PartsReply } from './parts-worker.ts'

/** What a body may hold: objects and arrays, strings and keys. */
export interface PartBounds {
  nodes: number
  strings: number
}

/** Whether `text` holds more than `nodes` `{` and `[` characters, or more than two `"` a string (each count stops there). */
export function mayHoldMoreParts(text: string, max: PartBounds): boolean {
  let n = 0
  for (const open of ['{', '[']) {
    for (let i = text.indexOf(open); i !== -1; i = text.indexOf(open, i + 1)) if (++n > max.nodes) return true
  }
  let quotes = 0
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) if (++quotes > 2 * max.strings) return true
  return false
}

/** Text scanned between two turns of the event loop: about a millisecond of the densest body. */
const SCAN_SLICE = 1 << 20

/**
 * `mayHoldMoreParts` for a body of any size: a large one is scanned a slice at a time, giving
 * the event loop back between slices, so a body of a million tiny parts does not hold another
 * key's requests for the whole scan. Each character is looked at once.
 */
export function mayHoldMorePartsSoon(text: string, max: PartBounds): boolean | Promise<boolean> {
  if (text.length <= SCAN_SLICE) return mayHoldMoreParts(text, max)
  return (async () => {
    let n = 0
    let quotes = 0
    let curly = text.indexOf('{')
    let square = text.indexOf('[')
    let quote = text.indexOf('"')
    for (let until = SCAN_SLICE; ; until += SCAN_SLICE) {
      for (; curly !== -1 && curly < until; curly = text.indexOf('{', curly + 1)) if (++n > max.nodes) return true
      for (; square !== -1 && square < until; square = text.indexOf('[', square + 1)) if (++n > max.nodes) return true
      for (; quote !== -1 && quote < until; quote = text.indexOf('"', quote + 1)) if (++quotes > 2 * max.strings) return true
      if (until >= text.length) return false
      await new Promise<void>((r) => setImmediate(r))
    }
  })()
}

type BunWorker = Worker & { ref(): void; unref(): void }

let worker: BunWorker | null | undefined
let nextId = 1
const owed = new Map<number, { resolve: () => void; reject: (e: Error) => void }>()

/** Every job owed ends as if no worker were there: the request thread then checks the body itself. */
function lose() {
  worker?.terminate()
  worker = null
  for (const job of owed.values()) job.resolve()
  owed.clear()
}

function start(): BunWorker | null {
  if (worker !== undefined) return worker
  try {
    const w = new Worker(workerUrl(import.meta.url, 'http/parts-worker.ts')) as BunWorker
    w.onmessage = (e: MessageEvent<PartsReply>) => {
      const job = owed.get(e.data.id)
      if (!job) return
      owed.delete(e.data.id)
      if (owed.size === 0) w.unref()
      if (e.data.error === undefined) job.resolve()
      else job.reject(new HttpError(400, e.data.error))
    }
    w.onerror = lose
    w.unref()
    worker = w
  } catch {
    worker = null
  }
  return worker
}

/**
 * Rejects with the body's 400 when it breaks a JSON rule (too many parts included); resolves
 * when it keeps them, or when no worker could look (the caller's own parse checks it then).
 */
export function checkElsewhere(text: string, max: PartBounds, what: string): Promise<void> {
  const w = start()
  if (!w) return Promise.resolve()
  const id = nextId++
  return new Promise<void>((resolve, reject) => {
    owed.set(id, { resolve, reject })
    w.ref()
    w.postMessage({ id, text, maxNodes: max.nodes, maxStrings: max.strings, what } satisfies PartsJob)
  })
}
