// Runs in a Bun Worker (parts.ts): parses a body that may hold more parts than a generation
// body may, and says whether it breaks a JSON rule, off the request thread. A million tiny
// parts take a tenth of a second or more to parse; here that holds nobody's request.
import { lowerThreadPriority } from '../lib/priority.ts'
import { HttpError } from './errors.ts'
import { parseJsonSafe } from './json-safe.ts'

declare const self: Worker

export type PartsJob = { id: number; text: string; maxNodes: number; maxStrings: number; what: string }
/** `error`: the 400's message, when the body breaks a rule; nothing when it may be parsed. */
export type PartsReply = { id: number; error?: string }

lowerThreadPriority()

self.onmessage = (e: MessageEvent<PartsJob>) => {
  const { id, text, maxNodes, maxStrings, what } = e.data
  try {
    parseJsonSafe(text, what, maxNodes, maxStrings)
    self.postMessage({ id } satisfies PartsReply)
  } catch (err) {
    // parseJsonSafe throws only its 400s; anything else is this worker's trouble, not the body's
    self.postMessage({ id, ...(err instanceof HttpError ? { error: err.message } : {}) } satisfies PartsReply)
  }
}
