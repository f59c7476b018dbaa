// One JSON line per event on stdout (or, asked for, a plain text line). Never a key, never a body:
// a line is written with any key in it redacted (a client's key in the path the access log names,
// an upstream's in an error's text).
import { writeSync } from 'node:fs'
import { withoutSecrets } from '../lib/secrets.ts'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'
/** `json`: one object per line, for a log pipeline; `text`: `time LEVEL msg key=value…`, for a terminal. */
export type LogFormat = 'json' | 'text'

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export interface Logger {
  level: LogLevel
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

interface Entry {
  at: number
  level: LogLevel
  msg: string
  fields?: Record<string, unknown>
}

/**
 * What JSON leaves as it is of the characters that drive a terminal, break a line or turn it
 * around: DEL and the C1 set (0x9b opens an escape on some terminals, 0x85 ends a line to some
 * readers), U+2028 and U+2029, and the bidi controls (an override left open reverses the rest of
 * the line). Escaped, a JSON line still parses back to the same text.
 */
const UNSHOWN = '\\x7f-\\x9f\\u2028\\u2029\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069'
const TO_ESCAPE = new RegExp(`[${UNSHOWN}]`, 'g')
/** A word with no space, quote, `=`, control character (a terminal's escapes start with one) or bidi control. */
const BARE = new RegExp(`^[^\\s"=\\x00-\\x1f${UNSHOWN}]+$`)
const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

const json = (e: Entry) => JSON.stringify({ time: new Date(e.at).toISOString(), level: e.level, msg: e.msg, ...e.fields }).replace(TO_ESCAPE, escaped) + '\n'

/** A value bare when it is one word, else as JSON (quoted, escaped): a line stays one line, and a client's text never drives the terminal. */
const textValue = (v: unknown) => (typeof v === 'string' && BARE.test(v) ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v)?.replace(TO_ESCAPE, escaped))

/** Text for a terminal line (the CLI's listings), as the text log writes a value: bare when one plain word, else quoted and escaped. */
export const terminalText = (v: string): string => textValue(v)!

function text(e: Entry): string {
  let line = `${new Date(e.at).toISOString()} ${e.level.toUpperCase().padEnd(5)} ${e.msg}`
  for (const k in e.fields) if (e.fields[k] !== undefined) line += ` ${k}=${textValue(e.fields[k])}`
  return line.replaceAll('\n', '\\n') + '\n'
}

const FORMATS: Record<LogFormat, (e: Entry) => string> = { json, text }

/**
 * Lines to stdout, coalesced: one write per 50 ms (or 512 lines) instead of one per line, since a write
 * to a pipe is a system call and the access log writes a line per request; the lines are
 * formatted then too, off the path of the response they describe (callers hand over fresh
 * field objects). Warnings and errors go out at once (with whatever is queued before them,
 * keeping the order), and whatever is queued is written before the process exits.
 */
export function bufferedStdout(delayMs = 50, maxQueued = 512, format: (e: Entry) => string = json): (e: Entry, urgent: boolean) => void {
  let queued: Entry[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const take = () => {
    if (timer) clearTimeout(timer)
    timer = undefined
    const text = queued.map(format).join('')
    queued = []
    return text
  }
  // the stream keeps what a full pipe cannot take yet, up to MAX_PENDING; past that (a reader
  // that stopped reading) lines are dropped and counted, and said once it reads again. A write
  // that fails (the reader gone: EPIPE; the log's disk full: ENOSPC) loses its lines, never the
  // process: an 'error' event with no listener would end it
  let dropped = 0
  const flush = () => {
    if (queued.length === 0) return
    const text = take()
    if (process.stdout.writableLength > MAX_PENDING) {
      dropped += text.split('\n').length - 1
      return
    }
    try {
      if (dropped > 0) process.stdout.write(format({ at: Date.now(), level: 'warn', msg: 'log: lines dropped while stdout was not taking them', fields: { dropped } }))
      dropped = 0
      process.stdout.write(text)
    } catch {
      // stdout closed or failing: there is nowhere to log to now
    }
  }
  listenForErrors()
  process.once('exit', () => {
    if (queued.length === 0) return
    try {
      writeSync(1, take())
    } catch {
      // stdout closed (EPIPE): there is nowhere left to log to
    }
  })
  return (e, urgent) => {
    queued.push(e)
    if (urgent || queued.length >= maxQueued) return flush()
    if (timer === undefined) {
      timer = setTimeout(flush, delayMs)
      timer.unref?.()
    }
  }
}

/** Bytes a slow stdout may hold unwritten before log lines are dropped. */
const MAX_PENDING = 8 * 1024 * 1024

let listening = false
/** A failed write to stdout is an 'error' event; with no listener it would end the process. */
function listenForErrors() {
  if (listening) return
  listening = true
  process.stdout.on('error', () => {})
}

const stdoutWriters: Partial<Record<LogFormat, ReturnType<typeof bufferedStdout>>> = {}

/** `write`: where lines go (tests); default stdout, coalesced. */
export function createLogger(level: LogLevel, write?: (line: string) => void, format: LogFormat = 'json'): Logger {
  const render = (e: Entry) => withoutSecrets(FORMATS[format](e))
  const out = write ? (e: Entry) => write(render(e)) : (stdoutWriters[format] ??= bufferedStdout(50, 512, render))
  const at = ORDER[level]
  const emit = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < at) return
    out({ at: Date.now(), level: lvl, msg, fields }, ORDER[lvl] >= ORDER.warn)
  }
  return { level, debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}
