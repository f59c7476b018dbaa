// The files capability as the rest of the gateway sees it: store, find, list, open and
// delete files, always on behalf of one key. Routes use it, and so do the generation
// surfaces, which resolve a `file_id` with the caller's key (a key never reads another key's files).
import type { ApiKey } from '../http/context.ts'
import type { Logger } from '../http/log.ts'
import type { BlobRead, BlobStore, StoredBlob } from './blob-store.ts'
import { DeletionHooks, type FileDeletedHook } from './deletion-hooks.ts'
import { nextTurn } from '../lib/turn.ts'
import { FilesRepo, type ScanQuery } from './repo.ts'
import type { DeleteReason, Family, FileRecord, ListPage, ListQuery } from './types.ts'
import { killAfterRecordIfAsked } from './test-kill.ts'
import type { UploadMeta } from './upload-params.ts'

/** Ids look like each family's own: `file-…` for OpenAI-style uploads, `file_…` for Anthropic's. */
const ID_PREFIX: Record<Family, string> = { openai: 'file-', anthropic: 'file_' }

export interface FilesServiceDeps {
  repo: FilesRepo
  blobs: BlobStore
  log: Logger
  now?: () => number
}

/** Expiries a gateway keeps a timer's worth of account for; more are left to the regular pass. */
const MAX_EXPIRIES = 10_000

/** An upload refused because the owner's files would pass its quota with it; `used`: the bytes they take. */
export class NoRoomForFile extends Error {
  constructor(readonly used: number) {
    super('the owner has no room left for this file')
  }
}

/** Rows of a file listing read between two turns of the event loop. */
const SCAN_STEP = 500

export class FilesService {
  readonly repo: FilesRepo
  readonly blobs: BlobStore
  private readonly log: Logger
  private readonly hooks = new DeletionHooks()
  readonly now: () => number
  /** A prune pass, once `start` runs; and the one timer set for the soonest expiry this instance knows. */
  private pruneNow?: () => void
  private nextPrune?: { at: number; timer: ReturnType<typeof setTimeout> }
  /** Expiries of files made here and not yet passed, soonest first (bounded: past it the regular pass takes them). */
  private expiries: number[] = []

  constructor(deps: FilesServiceDeps) {
    this.repo = deps.repo
    this.blobs = deps.blobs
    this.log = deps.log
    this.now = deps.now ?? Date.now
  }

  /** Called when a file is deleted or expires, before the delete answers (batches use it). */
  onFileDeleted(fn: FileDeletedHook): () => void {
    return this.hooks.on(fn)
  }

  /**
   * Streams `source` into the blob store. No record exists yet: the upload becomes a file
   * only through `commit`, and a failure (or `source` throwing, e.g. over the size limit)
   * leaves no bytes behind.
   */
  store(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<StoredBlob> {
    return this.blobs.put(source)
  }

  /**
   * Writes the record of stored bytes; if that fails, the bytes go too. With a `quota`, only if the
   * owner's live files fit it with this one, checked in the same step as the write (NoRoomForFile
   * otherwise): a kill never leaves a file past the quota that its client had no id for.
   */
  async commit(owner: string, family: Family, createdAt: number, blob: StoredBlob, meta: UploadMeta, quota?: number): Promise<FileRecord> {
    const rec: FileRecord = {
      id: ID_PREFIX[family] + Bun.randomUUIDv7().replaceAll('-', ''),
      apiKeyId: owner,
      filename: meta.filename,
      purpose: meta.purpose,
      bytes: blob.size,
      mimeType: meta.mimeType,
      createdAt,
      expiresAt: meta.expiresAt,
      blobKey: blob.key,
      sha256: blob.sha256,
    }
    try {
      if (quota === undefined) await this.repo.insert(rec)
      else {
        const used = await this.repo.insertWithin(rec, quota, this.now())
        if (used !== null) throw new NoRoomForFile(used)
      }
    } catch (e) {
      await this.discard(blob)
      throw e
    }
    killAfterRecordIfAsked(rec.filename)
    if (rec.expiresAt !== null) this.expiresAt(rec.expiresAt)
    return rec
  }

  /**
   * A file expires at `at`: a pass runs then, not up to a minute later (a batch reading the file
   * fails when it is removed, and must not run on meanwhile).
   */
  private expiresAt(at: number): void {
    if (this.expiries.length < MAX_EXPIRIES) {
      const i = this.expiries.findIndex((x) => x > at)
      this.expiries.splice(i < 0 ? this.expiries.length : i, 0, at)
    }
    this.schedule()
  }

  private schedule(): void {
    const now = this.now()
    while (this.expiries.length > 0 && this.expiries[0]! <= now) this.expiries.shift()
    const at = this.expiries[0]
    if (!this.pruneNow || at === undefined || (this.nextPrune && this.nextPrune.at <= at)) return
    if (this.nextPrune) clearTimeout(this.nextPrune.timer)
    // a moment after: the pass takes what is due by then
    const timer = setTimeout(() => {
      this.nextPrune = undefined
      this.pruneNow?.()
    }, Math.min(Math.max(0, at - now) + 50, 2 ** 31 - 1))
    timer.unref?.()
    this.nextPrune = { at, timer }
  }

  /** Drops stored bytes that will not become a file (the upload was refused after all). */
  async discard(blob: StoredBlob): Promise<void> {
    await this.blobs.delete(blob.key).catch(() => {})
  }

  /** The bytes of the owner's live files (its quota's use). */
  usedBytes(owner: string): Promise<number> {
    return this.repo.usedBytes(owner, this.now())
  }

  get(owner: string, id: string): Promise<FileRecord | null> {
    return this.repo.find(owner, id, this.now())
  }

  /** The owner's live files among `ids`, newest first; an id naming none is left out. */
  async some(owner: string, ids: string[]): Promise<FileRecord[]> {
    const found = (await Promise.all(ids.map((id) => this.get(owner, id)))).filter((f): f is FileRecord => f !== null)
    return found.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
  }

  /** The file `fileId` if `apiKey` may read it: the same check as the file routes. */
  resolveForKey(fileId: string, apiKey: ApiKey): Promise<FileRecord | null> {
    return this.get(apiKey.id, fileId)
  }

  /**
   * A page of the owner's files. null when a cursor names no file of this owner, so the
   * route can say which parameter was wrong.
   */
  async list(owner: string, q: ListQuery): Promise<ListPage | null> {
    const cursorId = q.after ?? q.before
    let cursor: { createdAt: number; id: string } | undefined
    if (cursorId !== undefined) {
      // a cursor that expired since the last page still marks a place in the order
      const c = await this.repo.find(owner, cursorId, 0)
      if (!c) return null
      cursor = { createdAt: c.createdAt, id: c.id }
    }
    const flip = q.before !== undefined
    const direction = (q.order === 'desc') !== flip ? 'desc' : 'asc'
    const page = await this.scanInSteps({ owner, limit: q.limit, purpose: q.purpose, cursor, direction, now: this.now() })
    // a `before` page was read walking away from the cursor; give it back in list order
    return flip ? { data: page.data.reverse(), hasMore: page.hasMore } : page
  }

  /**
   * A page read SCAN_STEP rows at a time, a turn of the event loop between steps: SQLite reads
   * on the request thread, and OpenAI's list takes up to 10,000 files a page (read at once,
   * one such page held every other request 0.3-0.7 s). Each step goes on from the last row of
   * the one before, as a client's next page would.
   */
  private async scanInSteps(q: ScanQuery): Promise<ListPage> {
    const data: FileRecord[] = []
    let cursor = q.cursor
    for (;;) {
      const step = await this.repo.scan({ ...q, limit: Math.min(SCAN_STEP, q.limit - data.length), cursor })
      for (const f of step.data) data.push(f)
      if (!step.hasMore || data.length >= q.limit) return { data, hasMore: step.hasMore }
      const last = step.data[step.data.length - 1]!
      cursor = { createdAt: last.createdAt, id: last.id }
      await nextTurn()
    }
  }

  /** The bytes of a record returned by get/resolveForKey: a stream, or a redirect. */
  async open(rec: FileRecord): Promise<BlobRead | null> {
    return this.blobs.get(rec.blobKey)
  }

  /** The whole file in memory, for surfaces that must inline it (base64 documents). */
  async bytes(rec: FileRecord): Promise<Uint8Array | null> {
    const r = await this.open(rec)
    if (!r) return null
    if (r.kind === 'redirect') {
      const res = await fetch(r.url)
      return res.ok ? new Uint8Array(await res.arrayBuffer()) : null
    }
    return new Uint8Array(await new Response(r.body).arrayBuffer())
  }

  /** Removes the record, tells the hooks, then removes the bytes. null when not the owner's. */
  async delete(owner: string, id: string): Promise<FileRecord | null> {
    const rec = await this.repo.remove(owner, id, Date.now())
    if (!rec) return null
    this.untold.add(rec.id)
    await this.forget(rec, 'deleted')
    return rec
  }

  /** Files whose record this instance removed and whose hooks it has not told yet. */
  private readonly untold = new Set<string>()

  /** Whether this instance removed the file's record and is about to tell the hooks why (they say it better than a look now can). */
  telling(id: string): boolean {
    return this.untold.has(id)
  }

  private async forget(rec: FileRecord, reason: DeleteReason) {
    try {
      await this.hooks.fire(rec, reason, (e) =>
        this.log.error('file deletion hook failed', { file_id: rec.id, reason, error: String(e) }),
      )
    } finally {
      this.untold.delete(rec.id)
    }
    await this.blobs.delete(rec.blobKey).catch((e) =>
      this.log.warn('file bytes not removed', { file_id: rec.id, error: String(e) }),
    )
  }

  /** Deletes every expired file; returns how many. */
  async pruneExpired(): Promise<number> {
    let n = 0
    for (;;) {
      const due = await this.repo.takeExpired(this.now(), 500)
      for (const rec of due) this.untold.add(rec.id)
      for (const rec of due) await this.forget(rec, 'expired')
      n += due.length
      if (due.length < 500) return n
    }
  }

  /** Removes what a crash left: unfinished uploads and bytes whose record was never written. */
  async sweep(startedAt: number) {
    const keys = await this.repo.blobKeys()
    return this.blobs.sweep((k) => keys.has(k), startedAt)
  }

  /**
   * Background work of a running gateway: the start-up sweep, then pruning expired files
   * every `pruneEveryMs`. Stopped through `onClose`, which waits for a pass in flight.
   */
  start(onClose: (() => void | Promise<void>)[], pruneEveryMs = 60_000): void {
    const startedAt = Date.now()
    let closed = false
    let running: Promise<unknown> = Promise.resolve()
    const prune = () => {
      if (closed) return
      running = this.pruneExpired().then(
        (n) => n > 0 && this.log.info('expired files removed', { count: n }),
        (e) => this.log.error('pruning expired files failed', { error: String(e) }),
      )
      // then the next expiry known here
      void running.then(() => !closed && this.schedule())
    }
    this.pruneNow ??= prune
    running = this.sweep(startedAt)
      .then(
        (r) => (r.temp > 0 || r.orphans > 0) && this.log.info('removed unfinished uploads', r),
        (e) => this.log.error('blob sweep failed', { error: String(e) }),
      )
      .then(prune)
    const timer = setInterval(prune, pruneEveryMs)
    timer.unref?.()
    onClose.push(async () => {
      closed = true
      clearInterval(timer)
      if (this.pruneNow === prune) {
        if (this.nextPrune) clearTimeout(this.nextPrune.timer)
        this.nextPrune = undefined
        this.pruneNow = undefined
      }
      // the database closes after this hook; let a pass in flight finish first
      for (let seen: Promise<unknown> | undefined; seen !== running; ) await (seen = running)
    })
  }
}
