// Bodies that may hold more parts than a generation body may (MAX_BODY_NODES objects and
// arrays, MAX_BODY_VALUES keys and array items) are checked by a worker before the request
// thread parses them. The counts of `{` and `[`, and of `,` characters, bound those from above
// (a container holds its first entry and one more after each comma; some may sit inside
// strings), found at memchr speed, so nearly every body skips the worker; a body past them is
// counted and parsed there first, and only parsed here once it is known to keep the rules. So a
// million tiny parts, keys or numbers cost the request thread a scan, not a parse.
import { startWorker } from '../lib/worker-url.ts'
import { HttpError } from './errors.ts'
import type { PartsJob, PartsReply } from './parts-worker.ts'

/** What a body may hold: objects and arrays; keys and array items (duplicate keys included). */
export interface PartBounds {
  nodes: number
  values: number
}

/** `{` and `[` (containers), then `,`: how the scan goes, a character at a time. */
const SCANNED = ['{', '[', ','] as const

/** Whether `text` may hold more than the bounds allow (the count stops once past them). */
export function mayHoldMoreParts(text: string, max: PartBounds): boolean {
  return partsOf(text, max) === true
}

/** What `text` may hold at most, in the bounds' terms; true once past them (the count stops there). */
export function partsOf(text: string, max: PartBounds): PartBounds | true {
  const n = { opens: 0, commas: 0 }
  if (scanUpTo(text, max, n, SCANNED.map((ch) => text.indexOf(ch)), text.length) === true) return true
  return { nodes: n.opens, values: n.opens + n.commas }
}

/**
 * One slice of the scan, up to `until`: true once past a bound (more containers than `nodes`, or
 * more entries than `values`, each container holding its first and one after each comma); else
 * where each scanned character's next one is.
 */
function scanUpTo(text: string, max: PartBounds, n: { opens: number; commas: number }, next: number[], until: number): true | number[] {
  for (let i = 0; i < SCANNED.length; i++) {
    const ch = SCANNED[i]!
    let at = next[i]!
    for (; at !== -1 && at < until; at = text.indexOf(ch, at + 1)) {
      if (ch === ',') n.commas++
      else if (++n.opens > max.nodes) return true
      if (n.commas + n.opens > max.values) return true
    }
    next[i] = at
  }
  return next
}

/**
 * `partsOf` counting only what stands outside JSON strings: exact for JSON text, where partsOf
 * counts what strings hold too. For text partsOf found past the bounds (a patch in a custom tool
 * call's one string may hold a million commas). Each character is looked at once or twice.
 */
export function jsonPartsOf(text: string, max: PartBounds): PartBounds | true {
  const n = { opens: 0, commas: 0 }
  let next: true | number[] = SCANNED.map((ch) => text.indexOf(ch))
  for (let at = 0; ; ) {
    const open = text.indexOf('"', at)
    next = scanUpTo(text, max, n, next, open === -1 ? text.length : open)
    if (next === true) return true
    const close = open === -1 ? -1 : stringEnd(text, open)
    // no more strings (or one never closed, which the parse will refuse): all is counted
    if (close === -1) return { nodes: n.opens, values: n.opens + n.commas }
    for (let i = 0; i < SCANNED.length; i++) if (next[i] !== -1 && next[i]! < close) next[i] = text.indexOf(SCANNED[i]!, close + 1)
    at = close + 1
  }
}

/** Where the JSON string opened at `open` ends: its next quote not escaped by a backslash; -1 for none. */
function stringEnd(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let slashes = 0
    while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++
    if (slashes % 2 === 0) return at
  }
  return -1
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
    const n = { opens: 0, commas: 0 }
    let next: true | number[] = SCANNED.map((ch) => text.indexOf(ch))
    for (let until = SCAN_SLICE; ; until += SCAN_SLICE) {
      next = scanUpTo(text, max, n, next, until)
      if (next === true) return true
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
    const w = startWorker(import.meta.url, 'http/parts-worker.ts') as BunWorker
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
    w.postMessage({ id, text, maxNodes: max.nodes, maxValues: max.values, what } satisfies PartsJob)
  })
}
