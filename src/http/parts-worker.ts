// Runs in a Bun Worker (parts.ts): parses a body that may hold more parts than a generation
// body may, and says whether it breaks a JSON rule, off the request thread. A million tiny
// parts take a tenth of a second or more to parse; here that holds nobody's request.
import { lowerThreadPriority } from '../lib/priority.ts'
import { HttpError } from './errors.ts'
import { crowded, parseJsonSafe } from './json-safe.ts'

declare const self: Worker

export type PartsJob = { id: number; text: string; maxNodes: number; maxValues: number; what: string }
/** `error`: the 400's message, when the body breaks a rule; nothing when it may be parsed. */
export type PartsReply = { id: number; error?: string }

lowerThreadPriority()

/**
 * Entries (keys and array items) as the text has them, a duplicate key each time it appears:
 * commas and containers outside strings, stopping past `max`. A parse keeps one of each
 * duplicate key, but the request thread's parse reads every one.
 */
export function entriesInText(text: string, max: number): number {
  let n = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 44 /* , */ || c === 123 /* { */ || c === 91 /* [ */) {
      if (++n > max) return n
    }
  }
  return n
}

self.onmessage = (e: MessageEvent<PartsJob>) => {
  const { id, text, maxNodes, maxValues, what } = e.data
  try {
    // past the bound as written (duplicate keys too): the 400 names its largest place
    if (entriesInText(text, maxValues) > maxValues) throw crowded(parseJsonSafe(text, what), maxNodes, maxValues)
    parseJsonSafe(text, what, maxNodes, maxValues)
    self.postMessage({ id } satisfies PartsReply)
  } catch (err) {
    // parseJsonSafe throws only its 400s; anything else is this worker's trouble, not the body's
    self.postMessage({ id, ...(err instanceof HttpError ? { error: err.message } : {}) } satisfies PartsReply)
  }
}
