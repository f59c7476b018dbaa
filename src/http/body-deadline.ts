// A request body that arrives slower than a slow link would send it is cut with a 408. Bun's
// idle timeout restarts at every byte, so a client that sends one byte a minute would hold its
// connection, and the request's read, for ever: a few thousand such clients hold every socket.
// The rule: a body has a grace (30 s), and beyond it the time a minimum pace (16 KiB/s) gives
// what it has sent. A client sending 20 MiB at 100 KiB/s is never near it; one that trickles is
// cut within a sweep of its deadline. One shared timer checks every waiting read, so a body
// that is already there (the usual case) costs a set entry, not a timer of its own.
import { HttpError } from './errors.ts'

const SWEEP_MS = 1_000

/** The pace a body must keep (config `limits.body_grace_s`, `limits.body_min_bytes_per_s`): one per process, set as the gateway starts. */
const pace = { graceMs: 30_000, minBytesPerS: 16 * 1024 }

export function setBodyPace(graceS: number, minBytesPerS: number) {
  pace.graceMs = graceS * 1000
  pace.minBytesPerS = minBytesPerS
}

/** How long `bytes` of body may take to arrive. */
function bodyTime(bytes: number): number {
  return pace.graceMs + (bytes / pace.minBytesPerS) * 1000
}

/** A read under way: its deadline, moved on as its bytes arrive, and what ends it when it passes. */
export interface BodyClock {
  /** More of the body arrived: its deadline moves on by the time those bytes earn. */
  arrived(bytes: number): void
  /** The read ended (whole, refused, or failed): no longer watched. */
  done(): void
}

interface Waiting {
  until: number
  expire: () => void
}

const waiting = new Set<Waiting>()
let sweeper: ReturnType<typeof setInterval> | undefined

function sweep() {
  const now = Date.now()
  for (const w of waiting) {
    if (w.until > now) continue
    waiting.delete(w)
    w.expire()
  }
  if (waiting.size === 0 && sweeper) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

/** The error a body too slow ends with. */
export function tooSlow(): HttpError {
  return new HttpError(408, `Request body not received in time: after its first ${pace.graceMs / 1000} s a body must arrive at ${pace.minBytesPerS} bytes/s or faster`)
}

/** Watches a body's read: `expire` runs once if the body falls behind the rule. `declared` bytes start it with their time (a read that cannot see its progress). */
export function bodyClock(expire: () => void, declared = 0): BodyClock {
  const w: Waiting = { until: Date.now() + bodyTime(declared), expire }
  waiting.add(w)
  sweeper ??= setInterval(sweep, SWEEP_MS)
  // a waiting body does not keep a gateway that is stopping alive
  sweeper.unref?.()
  return {
    arrived: (bytes) => {
      w.until += (bytes / pace.minBytesPerS) * 1000
    },
    done: () => {
      waiting.delete(w)
    },
  }
}

/**
 * `read` (a body read that cannot see its progress, of `declared` bytes), or a 408 once it is
 * past their time. The read itself is left to end with the connection, which Bun closes once
 * the 408 is answered with the body unread.
 */
export function withinBodyTime<T>(read: Promise<T>, declared: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const clock = bodyClock(() => reject(tooSlow()), declared)
    read.then(
      (v) => {
        clock.done()
        resolve(v)
      },
      (e) => {
        clock.done()
        reject(e)
      },
    )
  })
}

/**
 * A long body (an upload) under the same rule, as it is read: past its time, it fails with the
 * 408. Its reader calls `done` however the read ends.
 */
export function timedBody(body: ReadableStream<Uint8Array>): { body: ReadableStream<Uint8Array>; done: () => void } {
  let clock: BodyClock | undefined
  const timed = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        clock = bodyClock(() => {
          try {
            controller.error(tooSlow())
          } catch {
            // already ended
          }
        })
      },
      transform(chunk, controller) {
        clock!.arrived(chunk.byteLength)
        controller.enqueue(chunk)
      },
    }),
  )
  return { body: timed, done: () => clock?.done() }
}
