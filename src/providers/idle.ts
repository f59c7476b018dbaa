// An upstream stream that stops sending: once a stream is handed back, the provider's
// `timeout_ms` no longer bounds the whole call (a long answer may take minutes), but it still
// bounds the silence between two reads. One sweep a second looks at every open stream; a read
// costs the stream two assignments (a coarse clock, not a timer re-armed per chunk). Only the
// time a read waits on the upstream counts: a client slow to take what came is not the
// upstream's silence (its backpressure holds the reads). A stream silent for longer is cut:
// the upstream call is aborted with a mid-stream 504 the client gets in band and the record
// keeps, instead of the stream (and its socket) held forever.
import { UpstreamError } from '../ir/errors.ts'

const SWEEP_MS = 1_000

/** Seconds since the first stream was watched; a read notes it. */
let tick = 0
const watched = new Set<Idle>()
let sweeper: ReturnType<typeof setInterval> | undefined

function sweep(): void {
  tick++
  // a read noted at `seen` came at least (tick - seen - 1) whole sweeps ago: silent that long for sure
  for (const w of watched) if (w.waiting && (tick - w.seen - 1) * SWEEP_MS >= w.limitMs) w.stall()
  if (watched.size === 0) {
    clearInterval(sweeper)
    sweeper = undefined
  }
}

/** What a stream's reader tells of its reads. */
export interface Watch {
  /** Set by a reader of the body that notes its reads; a call that reads its whole body in the attempt leaves it unset. */
  streaming: boolean
  /** A read is asked of the upstream: from now its silence counts (not while the client is slow to take what came). */
  asking(): void
  /** A read came: the stream is alive. */
  touch(): void
  /** The stream ended (read to its end, failed, or left by the client). */
  end(): void
  /**
   * The upstream's stream has begun (its opening read) while the attempt still holds it, waiting
   * for the event that decides: from now its silence is watched, not the whole call's time, as
   * once it is handed back.
   */
  begun(): void
}

/** The silence one stream may keep: handed to `accept`, started once the stream is the caller's. */
export class Idle implements Watch {
  seen = tick
  streaming = false
  waiting = false
  /** Set by the attempt: what else begun() does (the whole call's timer given up). */
  onBegun?: () => void
  private over = false

  constructor(
    private readonly controller: AbortController,
    private readonly provider: string,
    readonly limitMs: number,
  ) {}

  asking(): void {
    this.seen = tick
    this.waiting = true
  }

  touch(): void {
    this.seen = tick
    this.waiting = false
  }

  /** The attempt has handed the stream back: from now on the silence is watched. */
  start(): void {
    if (!this.streaming || this.over) return
    this.seen = tick
    watched.add(this)
    sweeper ??= setInterval(sweep, SWEEP_MS)
    sweeper.unref?.()
  }

  begun(): void {
    this.onBegun?.()
    this.start()
  }

  end(): void {
    this.over = true
    watched.delete(this)
  }

  stall(): void {
    this.over = true
    watched.delete(this)
    const secs = Math.round(this.limitMs / 100) / 10
    this.controller.abort(new UpstreamError({ status: 504, message: `upstream ${this.provider} sent nothing for ${secs} s mid-stream`, type: 'timeout' }))
  }
}

/** What a reader is handed outside an attempt (a test, a body read on its own): watches nothing. */
export const UNWATCHED: Watch = { streaming: false, asking() {}, touch() {}, end() {}, begun() {} }
