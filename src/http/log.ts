// One JSON line per event on stdout. Never a key, never a body.
import type { LogLevel } from '../config/load.ts'

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export interface Logger {
  level: LogLevel
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const at = ORDER[level]
  const emit = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < at) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n')
  }
  return { level, debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}
