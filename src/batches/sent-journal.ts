// Which of its claimed batch items a process sent upstream, kept on the local disk
// (`spool/batch-sent/<file>.jsonl` in the data dir: the spool's file and lock,
// generations/spool.ts). A claim (a mark, on SQLite) that a dead process left is taken for sent,
// and its item fails as lost (leases.ts, marks.ts); but while the database is away the claim of an
// item handed out and never sent (waiting for its credit hold, or for its body to be read) cannot
// be given back, and a stop or kill then failed it as lost though it never left. With this
// journal the next start on the data dir knows: an item its claimer's journal does not name was
// never sent, and it is given back to run (sent-release.ts). The file's first line names whose
// claims it speaks for (the lease owner) and is written before that process's first claim; the
// items are named as their workers are about to make their first upstream call, one append for
// each such message, and the workers wait for it (pool.ts, worker.ts). An append is written, not
// flushed (no fsync): a killed process leaves it whole, the system has it; a power loss may not,
// so a journal written before the machine last started is not trusted (each file names the boot
// it was written in), and its claims fail as lost, as before. A journal that cannot be written is
// removed and no more is written for the process's life: its claims fail as lost after a kill, as
// before, never as unsent. The file starts anew (the items sent and not yet stored, then the old
// file removed) once it holds many more lines than items outstanding.
import { existsSync, readFileSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../http/log.ts'
import { Spool, type Parsed } from '../generations/spool.ts'

export const sentJournalDir = (dataDir: string) => join(dataDir, 'spool', 'batch-sent')

/**
 * A line: the first, whose claims the file speaks for and in which boot of the machine; the
 * others, items of a batch sent. Read back, a line that is none of these is `torn`.
 */
type Line = { owner: string; boot: string | null } | { b: string; i: number[] } | { torn: true }

/** A file starts anew past this many lines, and as many again as items outstanding. */
const ROTATE_LINES = 4_096

/** This boot of the machine (Linux); null where it cannot be known, when no journal is trusted. */
function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null
  } catch {
    return null
  }
}

function parseLines(text: string): Parsed<Line> {
  const rows: Line[] = []
  let torn = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    let v: Record<string, unknown> | null
    try {
      v = JSON.parse(line)
    } catch {
      v = null
    }
    if (typeof v?.owner === 'string' && (typeof v.boot === 'string' || v.boot === null)) rows.push({ owner: v.owner, boot: v.boot as string | null })
    else if (typeof v?.b === 'string' && Array.isArray(v.i) && v.i.every((n) => Number.isInteger(n))) rows.push({ b: v.b, i: v.i as number[] })
    else {
      torn++
      rows.push({ torn: true })
    }
  }
  return { rows, aside: [], torn }
}

export class SentJournal {
  private spool: Spool<Line> | null = null
  /** Could not be written: off for this process's life, its files removed (those that would not go, listed). */
  private off = false
  private leftover: string[] = []
  /** Items sent and not yet stored, by batch: what a new file starts with. */
  private readonly outstanding = new Map<string, Set<number>>()
  private lines = 0
  private closed = false
  private readonly boot = bootId()

  constructor(
    private readonly dir: string,
    /** The lease owner (mark owner) of this process's claims. */
    private readonly owner: string,
    private readonly log: Logger,
  ) {}

  /** Before this process's first claim: the file says whose claims it speaks for. */
  ready(): void {
    if (this.spool || this.off) return
    const spool = new Spool<Line>(this.dir, parseLines, false)
    try {
      spool.append([{ owner: this.owner, boot: this.boot }])
      this.spool = spool
      this.lines = 1
    } catch (e) {
      this.stop(spool, e)
    }
  }

  /**
   * Items about to make their first upstream call (told by their worker, which waits for this):
   * one append. → whether they may go: false only when the journal could not be written and its
   * file could not be removed either (it would then say they were never sent).
   */
  called(items: readonly { batchId: string; idx: number }[]): boolean {
    if (this.closed) return false
    this.ready()
    if (this.off) return this.gone()
    const byBatch = new Map<string, number[]>()
    for (const { batchId, idx } of items) {
      const list = byBatch.get(batchId)
      if (list) list.push(idx)
      else byBatch.set(batchId, [idx])
    }
    try {
      this.spool!.append([...byBatch].map(([b, i]) => ({ b, i })))
    } catch (e) {
      this.stop(this.spool!, e)
      return this.gone()
    }
    for (const [b, idxs] of byBatch) {
      let set = this.outstanding.get(b)
      if (!set) this.outstanding.set(b, (set = new Set()))
      for (const i of idxs) set.add(i)
    }
    this.lines += byBatch.size
    if (this.lines > ROTATE_LINES + this.count()) this.rotate()
    return true
  }

  /** The item's result is stored: a new file need not name it. */
  stored(batchId: string, idx: number): void {
    const set = this.outstanding.get(batchId)
    if (set?.delete(idx) && set.size === 0) this.outstanding.delete(batchId)
  }

  /** Stop. `keep`: the file stays for the next start (claims could not all be given back); else it goes. */
  close(keep: boolean): void {
    this.closed = true
    if (!this.spool) return
    if (!keep) this.spool.clear()
    this.spool.close()
    this.spool = null
  }

  private count(): number {
    let n = 0
    for (const s of this.outstanding.values()) n += s.size
    return n
  }

  /** A new file with the items outstanding, then the old one goes: a start between reads both. */
  private rotate(): void {
    const next = new Spool<Line>(this.dir, parseLines, false)
    const open = [...this.outstanding].map(([b, s]) => ({ b, i: [...s] }))
    try {
      next.append([{ owner: this.owner, boot: this.boot }, ...open])
    } catch (e) {
      // the old file goes on: a start reads a leftover of this one beside it, no harm
      next.clear()
      next.close()
      this.lines = 1 + open.length
      return void this.log.warn('batches: starting the journal of items sent anew failed; it goes on as it was', { error: (e as Error).message })
    }
    const old = this.spool!
    this.spool = next
    this.lines = 1 + open.length
    old.clear()
    old.close()
  }

  /** Not writable: its file goes (the claims then fail as lost after a kill, as before), and no more is written. */
  private stop(spool: Spool<Line>, e: unknown): void {
    this.log.error('batches: the journal of items sent cannot be written; items claimed here fail as lost after a kill, as before', { error: (e as Error).message })
    this.off = true
    this.spool = null
    const file = join(this.dir, spool.id + '.jsonl')
    spool.clear()
    spool.close()
    if (existsSync(file)) this.leftover.push(file)
  }

  /** Off: whether no file of it is left (then an item may go, unnamed). */
  private gone(): boolean {
    this.leftover = this.leftover.filter((f) => {
      try {
        unlinkSync(f)
      } catch (e) {
        return (e as { code?: string }).code !== 'ENOENT'
      }
      return false
    })
    return this.leftover.length === 0
  }
}

/** What the journals of a process no longer running say. */
export interface DeadJournal {
  /** Its claims' owner. */
  owner: string
  /** The items it sent, by batch. */
  sent: Map<string, Set<number>>
  /** Written in another boot of the machine (or one that cannot be known): it may be short of what was sent. */
  untrusted: boolean
  /** Its claims dealt with: its files go. */
  done(): void
  /** Not dealt with: its files stay for the next start. */
  leave(): void
}

/** The journals of processes no longer running on the data dir (their locks free), a process's files together. */
export function deadJournals(dataDir: string): DeadJournal[] {
  const boot = bootId()
  const byOwner = new Map<string, DeadJournal & { files: { done(): void; leave(): void }[] }>()
  for (const o of new Spool<Line>(sentJournalDir(dataDir), parseLines, false).orphans()) {
    const rows = o.rows
    // the last line may be cut short by the kill (its item was not handed on yet); one before the
    // last that cannot be read may have named an item sent
    while (rows.length > 0 && 'torn' in rows.at(-1)!) rows.pop()
    const [head, ...rest] = rows
    // no first line: cut short by the kill, before any claim
    if (!head || !('owner' in head)) {
      o.done([])
      continue
    }
    let j = byOwner.get(head.owner)
    if (!j) {
      const files: { done(): void; leave(): void }[] = []
      byOwner.set(head.owner, (j = { owner: head.owner, sent: new Map(), untrusted: false, files, done: () => files.forEach((f) => f.done()), leave: () => files.forEach((f) => f.leave()) }))
    }
    j.files.push({ done: () => void o.done([]), leave: () => o.leave() })
    if (boot === null || head.boot !== boot || rest.some((r) => !('b' in r))) j.untrusted = true
    for (const r of rest) {
      if (!('b' in r)) continue
      let set = j.sent.get(r.b)
      if (!set) j.sent.set(r.b, (set = new Set()))
      for (const i of r.i) set.add(i)
    }
  }
  return [...byOwner.values()]
}
