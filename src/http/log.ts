// One JSON line per event on stdout. Never a key, never a body.
import { writeSync } from 'node:fs'
import type { LogLevel } from '../config/load.ts'

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export interface Logger {
  level: LogLevel
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/**
 * Lines to stdout, coalesced: one write per few ms instead of one per line, since a write
 * to a pipe is a system call and the access log writes a line per request. Warnings and
 * errors go out at once (with whatever is queued before them, keeping the order), and
 * whatever is queued is written before the process exits.
 */
export function bufferedStdout(delayMs = 10, maxBytes = 64 * 1024): (line: string, urgent?: boolean) => void {
  let queued: string[] = []
  let bytes = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const take = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    const text = queued.join('')
    queued = []
    bytes = 0
    return text
  }
  // the stream keeps what a full pipe cannot take yet; at exit there is no later, so write through
  const flush = () => void (queued.length > 0 && process.stdout.write(take()))
  process.once('exit', () => {
    if (queued.length === 0) return
    try {
      writeSync(1, take())
    } catch {
      // stdout closed (EPIPE): there is nowhere left to log to
    }
  })
  return (line, urgent = false) => {
    queued.push(line)
    bytes += line.length
    if (urgent || bytes >= maxBytes) return flush()
    if (timer === undefined) {
      timer = setTimeout(flush, delayMs)
      timer.unref?.()
    }
  }
}

let stdoutWriter: ReturnType<typeof bufferedStdout> | undefined

export function createLogger(level: LogLevel, write?: (line: string, urgent?: boolean) => void): Logger {
  const out = write ?? (stdoutWriter ??= bufferedStdout())
  const at = ORDER[level]
  const emit = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < at) return
    out(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n', ORDER[lvl] >= ORDER.warn)
  }
  return { level, debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}
