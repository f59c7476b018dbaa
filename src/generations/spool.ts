// The records' spool: generation records waiting for a database that is away (or full) are
// kept on the local disk too, so a process killed outright during the outage (kill -9, OOM,
// power loss) loses none of the replies its clients got. One file a process, in the data dir's
// `spool/`: `<instance>.jsonl`, one record a line, each append flushed (fsync) before it counts.
// The recorder removes the file once the database has committed the records it holds.
// A process owns its file through a lock beside it (`<instance>.lock`, the same kind of lock as
// `serve.lock`: db/data-dir-lock.ts), which the system lets go with the process, kill -9
// included. So a spool whose lock can be taken belongs to no live gateway: the next start
// writes it (Recorder.replaySpools), whichever instance sharing the data dir it is. The lock,
// once taken, is held until the process stops, across the outages in between: let go when a
// spool went, another gateway that listed the file before could take it, and then refuse this
// one its next spool, or (on the lock file's old inode, once removed and made again) write that
// spool from under it. Writing a spool twice counts nothing twice: the records keep their ids,
// and an id stored already is skipped, its cost and rollup with it (GenerationStore.insertRows);
// one retention may have pruned since is kept aside uncounted (Recorder.replaySpools).
// A record a replay cannot store is never dropped with the file: it is kept beside it, in
// `<instance>.rejected` (a line each, `{reason, record}`), for a person to look at.
import { closeSync, fsyncSync, ftruncateSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { tryLockFile, type DataDirLock } from '../db/data-dir-lock.ts'
import type { GenerationRow } from './row.ts'
import { spooledRow, type Aside } from './spool-rows.ts'

const EXT = '.jsonl'
const LOCK = '.lock'
/** Records of a spool that were not stored, kept once the spool goes. */
export const REJECTED = '.rejected'
/** A lock file with no spool beside it is left alone this long after it was made (its process may be about to write one). */
const STALE_LOCK_MS = 60_000

/** What a spool's text holds: its entries, those kept aside, and the lines that were none. */
export interface Parsed<T> {
  rows: T[]
  aside: Aside[]
  torn: number
}

/** A spool left by a gateway no longer running: its records, and its lock, held until `done` or `leave`. */
export interface Orphan<T = GenerationRow> {
  id: string
  rows: T[]
  /** Lines that parsed but are no record that can be stored (a value it needs is missing). */
  aside: Aside[]
  /** Lines that were no record (the last one cut short by the kill). */
  torn: number
  /**
   * Written to the database: the records it did not store (`aside`, flushed to the disk first,
   * in `<id>.rejected`) are kept, and the file and its lock go. Returns the kept file's name.
   */
  done(aside: readonly Aside[]): string | undefined
  /** Not written yet: the lock is let go, the file stays for a later try. */
  leave(): void
}

/**
 * A spool of generation records (the default), or of other entries kept the same way (a batch
 * results writer's results: batches/results-spool.ts), each a line of JSON that `read` parses back.
 */
export class Spool<T = GenerationRow> {
  /** This process's name for its file: time-ordered, never another's. */
  readonly id = Bun.randomUUIDv7('hex')
  private lock: DataDirLock | null = null
  private fd: number | undefined
  /** Bytes of the file: an append that failed half-way is cut back to it. */
  private size = 0

  constructor(
    readonly dir: string,
    private readonly read: (text: string) => Parsed<T> = parse as unknown as (text: string) => Parsed<T>,
    /**
     * Each append flushed (fsync) before it returns; without, it is the system's once written,
     * which a killed process leaves whole but a power loss may not (batches/sent-journal.ts).
     */
    private readonly flush = true,
  ) {}

  private get file(): string {
    return join(this.dir, this.id + EXT)
  }

  /** Whether this process has a spool file now. */
  get open(): boolean {
    return this.fd !== undefined
  }

  /**
   * Appends the records, flushed to the disk before it returns (unless made not to). Throws when the disk cannot take
   * them (full: ENOSPC), leaving the file as it was.
   */
  append(rows: readonly T[]): void {
    if (rows.length === 0) return
    if (!this.lock) {
      this.lock = tryLockFile(this.dir, this.id + LOCK)
      if (!this.lock) throw new Error(`records spool ${this.id}: its lock is held by another process`)
    }
    if (this.fd === undefined) {
      this.fd = openSync(this.file, 'a', 0o600)
      this.size = 0
      // the file's name in its directory is flushed too, or a power loss could lose the file
      syncDir(this.dir)
    }
    const bytes = Buffer.from(rows.map((r) => JSON.stringify(r) + '\n').join(''))
    try {
      for (let at = 0; at < bytes.length; ) at += writeSync(this.fd, bytes, at)
      if (this.flush) fsyncSync(this.fd)
      this.size += bytes.length
    } catch (e) {
      try {
        ftruncateSync(this.fd, this.size)
      } catch {
        // the next append's line may then follow a torn one: a replay skips what does not parse
      }
      throw e
    }
  }

  /** The database committed every record of the file: it goes (its lock stays this process's). */
  clear(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd)
      this.fd = undefined
      removeQuietly(this.file)
    }
    this.size = 0
  }

  /** Stop: a file still open stays for the next start; the lock goes (its file too when no spool is left). */
  close(): void {
    const left = this.fd !== undefined
    if (left) closeSync(this.fd!)
    this.fd = undefined
    if (!this.lock) return
    this.lock.release()
    this.lock = null
    if (!left) removeQuietly(join(this.dir, this.id + LOCK))
  }

  /** Spools of gateways no longer running (their locks free), each locked by this process until `done` or `leave`. */
  orphans(): Orphan<T>[] {
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch {
      return [] // no spool was ever written here
    }
    const out: Orphan<T>[] = []
    const present = new Set(names)
    for (const name of names) {
      if (name.endsWith(LOCK) && !present.has(name.slice(0, -LOCK.length) + EXT)) this.dropStaleLock(name)
      if (!name.endsWith(EXT)) continue
      const id = name.slice(0, -EXT.length)
      if (id === this.id) continue
      let lock: DataDirLock | null
      try {
        lock = tryLockFile(this.dir, id + LOCK)
      } catch {
        continue // its lock cannot be had (a file this process may not open): left for another look
      }
      if (!lock) continue // its gateway is running
      const file = join(this.dir, name)
      const lockFile = join(this.dir, id + LOCK)
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch {
        // written and removed by another instance just now
        lock.release()
        removeQuietly(lockFile)
        continue
      }
      const { rows, aside, torn } = this.read(text)
      const dir = this.dir
      out.push({
        id,
        rows,
        aside,
        torn,
        done(kept) {
          // the spool is the only copy of these: they are on the disk before it goes
          const keptIn = kept.length > 0 ? writeDurably(dir, id + REJECTED, kept.map((a) => JSON.stringify(a) + '\n').join('')) : undefined
          removeQuietly(file)
          lock.release()
          removeQuietly(lockFile)
          return keptIn
        },
        leave: () => lock.release(),
      })
    }
    return out
  }

  /**
   * The lock of a gateway killed with no spool left (it had one, written since): removed once
   * free. Not one made in the last minute (STALE_LOCK_MS).
   */
  private dropStaleLock(name: string) {
    if (name === this.id + LOCK) return
    const file = join(this.dir, name)
    try {
      if (Date.now() - statSync(file).mtimeMs < STALE_LOCK_MS) return
      const lock = tryLockFile(this.dir, name)
      if (!lock) return
      removeQuietly(file)
      lock.release()
    } catch {
      // gone already, or not ours to open: left as it is
    }
  }
}

/** The records of a spool, each id once (an append retried after a failure may repeat some). */
function parse(text: string): Parsed<GenerationRow> {
  const byId = new Map<string, ReturnType<typeof spooledRow>>()
  let torn = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    let v: unknown
    try {
      v = JSON.parse(line)
    } catch {
      torn++
      continue
    }
    const id = (v as { id?: unknown } | null)?.id
    if (typeof id === 'string' && id !== '') byId.set(id, spooledRow(v as Record<string, unknown>))
    else torn++
  }
  const rows: GenerationRow[] = []
  const aside: Aside[] = []
  for (const r of byId.values()) 'row' in r ? rows.push(r.row) : aside.push(r.aside)
  return { rows, aside, torn }
}

/** Writes a file whole and flushes it, with its name, to the disk. Returns its name. */
function writeDurably(dir: string, name: string, text: string): string {
  const fd = openSync(join(dir, name), 'w', 0o600)
  try {
    const bytes = Buffer.from(text)
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  syncDir(dir)
  return name
}

function removeQuietly(file: string) {
  try {
    unlinkSync(file)
  } catch {
    // gone already
  }
}

function syncDir(dir: string) {
  let fd: number | undefined
  try {
    fd = openSync(dir, 'r')
    fsyncSync(fd)
  } catch {
    // not every file system lets a directory be flushed
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
