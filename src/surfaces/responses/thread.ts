// Responses-style threads: each stored response keeps the input items its request added,
// its output items and the response object; `previous_response_id` chains them.
//
// Rows are keyed by the gateway's own row id. The response id a client saw (the upstream's,
// on the pass-through path) is a field a key's lookup reads, latest first: upstreams and
// proxies can hand out one id twice, and one key's reply must never overwrite another key's
// thread, nor a thread point at itself. Each row links the row it continued.
//
// A response is saved before the reply's terminal event goes out, into a pending map that every
// lookup reads first, so a continuation sent right after finds it; the map is written in one
// transaction a few ms later (one INSERT per reply was a fifth of the surface's CPU). `save`
// resolves once the row is committed: the surface holds the reply's last bytes until then, so
// a response a client has received survives a kill -9. Another key's response is as unknown as
// a missing one. A thread's stored size is bounded: a continuation past the bound is a 400.
import { insertList, names, selectList } from '../../db/columns.ts'
import { storedItems, storedResponses } from '../../db/schema.ts'
import type { Sql } from '../../db/sql.ts'
import { SoonWrite } from '../../db/soon-write.ts'
import { badRequest, HttpError } from '../../http/errors.ts'
import type { Item } from './items.ts'
import { responseOfItem } from './item-ids.ts'
import { nextTurn, turnOfItsOwn } from '../../lib/turn.ts'
import { InputCache, KEPT_FROM_CHARS } from './input-cache.ts'
import { JsonRows, parsePieces } from '../../db/json-rows.ts'
import type { PruneStep } from '../../lib/prune-steps.ts'
import { shownItems } from './held-search.ts'

type Obj = Record<string, unknown>

/** What one request's item references have read (ThreadStore.referenced). */
export interface References {
  seen: Map<string, Map<unknown, Item> | null>
  bytes: number
  missed: boolean
}

export interface StoredResponse {
  id: string
  apiKeyId: string
  model: string
  status: string
  /** The response id this one continued, as the client gave it. */
  previousResponseId: string | null
  /** The row it continued (from the thread's lookup), or null for a new thread. */
  previous: ThreadHead | null
  conversation: string | null
  inputItems: Item[]
  outputItems: Item[]
  /** The response object as the client got it (its output is stored apart). */
  response?: Obj
}

/** The newest row of a thread, as a continuation links it. */
export interface ThreadHead {
  rowId: string
  threadBytes: number
}

/** The model of the turn a thread's reasoning item was read from (ThreadStore.history). */
const reasonedBy = new WeakMap<Item, string>()

/** The model of the stored turn a reasoning item of a thread came with; undefined for one the request brought. */
export const reasoningModelOf = (it: Item): string | undefined => reasonedBy.get(it)

/** Marks a reasoning item read from elsewhere (a conversation's items) as made by `model`'s turn. */
export const markReasonedBy = (it: Item, model: string): void => void reasonedBy.set(it, model)

/** A stored response as the store reads it, each column under its TypeScript name. */
type Row = typeof storedResponses.$inferSelect

interface Pending {
  row: Row
  /** Its output items' ids that its upstream made (stored_items). */
  upstreamIds: string[]
  committed: Promise<void>
  commit(): void
}

/** A response another instance has not written yet: read again this often, this long apart. */
const SHARED_MISS_RETRIES = 4
const SHARED_MISS_WAIT_MS = 25

/** A thread deeper than this is refused rather than walked (each step is one indexed read). */
const MAX_DEPTH = 10_000

/** The default bound on a thread's stored bytes (`responses.max_thread_bytes`). */
export const DEFAULT_MAX_THREAD_BYTES = 32 * 1024 * 1024

const s = names(storedResponses)
const COLUMNS = selectList(storedResponses)
const INSERTED = insertList(storedResponses)
const INSERT = `INSERT INTO ${s.$table} (${INSERTED.sql}) VALUES (${INSERTED.keys.map(() => '?').join(', ')})`
// a key's latest row of a response id (among rows of one ms, the greatest row id: time-ordered)
const LATEST = `ORDER BY ${s.createdAt} DESC, ${s.rowId} DESC LIMIT 1`
const BY_ID = `SELECT ${COLUMNS} FROM ${s.$table} WHERE ${s.apiKeyId} = ? AND ${s.id} = ? ${LATEST}`
// a thread is walked on these alone, and each row's items are read when their turn comes
const META_KEYS = ['rowId', 'id', 'apiKeyId', 'model', 'status', 'previousRowId', 'previousResponseId', 'threadBytes', 'createdAt'] as const
const META = selectList(storedResponses, META_KEYS)
const META_BY_ROW = `SELECT ${META} FROM ${s.$table} WHERE ${s.rowId} = ?`
const META_BY_ID = `SELECT ${META} FROM ${s.$table} WHERE ${s.apiKeyId} = ? AND ${s.id} = ? ${LATEST}`
const OUTPUT_BY_ID = `SELECT ${selectList(storedResponses, [...META_KEYS, 'outputItems'])} FROM ${s.$table} WHERE ${s.apiKeyId} = ? AND ${s.id} = ? ${LATEST}`
// a retrieve reads no input items (a turn's input may be megabytes; the object has none of it)
const OBJECT_KEYS = ['rowId', 'id', 'apiKeyId', 'model', 'createdAt', 'status', 'previousRowId', 'previousResponseId', 'threadBytes', 'outputItems', 'response'] as const
const OBJECT_BY_ID = `SELECT ${selectList(storedResponses, OBJECT_KEYS)} FROM ${s.$table} WHERE ${s.apiKeyId} = ? AND ${s.id} = ? ${LATEST}`
const ITEMS_OF_ROW = `SELECT ${selectList(storedResponses, ['inputItems', 'outputItems'])} FROM ${s.$table} WHERE ${s.rowId} = ?`
const INPUT_OF_ROW = `SELECT ${selectList(storedResponses, ['inputItems'])} FROM ${s.$table} WHERE ${s.rowId} = ?`
const LATEST_OF_CONVERSATION = `SELECT ${selectList(storedResponses, ['id'])} FROM ${s.$table} WHERE ${s.apiKeyId} = ? AND ${s.conversation} = ? AND ${s.createdAt} >= ? ${LATEST}`
type Meta = Pick<Row, (typeof META_KEYS)[number]>

const DELETE = `DELETE FROM ${s.$table} WHERE ${s.apiKeyId} = ? AND ${s.id} = ?`

// the upstream's item ids of a stored response (stored_items), and whether a key was given one
const i = names(storedItems)
// many rows in one statement: a flush's items cost one round trip, not one each (on PostgreSQL
// each is one, inside the transaction a reply's last bytes wait for)
const insertItems = (n: number) => `INSERT INTO ${i.$table} (${i.apiKeyId}, ${i.itemId}, ${i.rowId}) VALUES ${Array(n).fill('(?, ?, ?)').join(', ')}`
/** Item rows written by one statement at most (3 parameters each, far below either database's limit). */
const ITEMS_PER_INSERT = 500
const ownedAmong = (n: number) =>
  `SELECT DISTINCT i.${i.itemId} AS "itemId" FROM ${i.$table} i JOIN ${s.$table} r ON r.${s.rowId} = i.${i.rowId} WHERE i.${i.apiKeyId} = ? AND r.${s.apiKeyId} = ? AND r.${s.createdAt} >= ? AND i.${i.itemId} IN (${marks(n)})`
// the output items of the key's newest stored response an upstream item of that id is of
const OUTPUT_OF_ITEM = `SELECT r.${s.outputItems} AS "outputItems" FROM ${i.$table} i JOIN ${s.$table} r ON r.${s.rowId} = i.${i.rowId} WHERE i.${i.apiKeyId} = ? AND r.${s.apiKeyId} = ? AND r.${s.createdAt} >= ? AND i.${i.itemId} = ? ORDER BY r.${s.createdAt} DESC, r.${s.rowId} DESC LIMIT 1`
const DELETE_ITEMS = `DELETE FROM ${i.$table} WHERE ${i.rowId} IN (SELECT ${s.rowId} FROM ${s.$table} WHERE ${s.apiKeyId} = ? AND ${s.id} = ?)`
// those of rows that are gone (a pruned row's; one a continuation kept stays)
const itemsOfGone = (n: number) => `DELETE FROM ${i.$table} WHERE ${i.rowId} IN (${marks(n)}) AND NOT EXISTS (SELECT 1 FROM ${s.$table} r WHERE r.${s.rowId} = ${i.$table}.${i.rowId})`
/** Ids asked about in one query at most. */
const OWNED_CHUNK = 500
// the retention: the rows made before a time, a page at a time in (created, row id) order, each
// saying whether a row continues it; which of some rows are still old and continued by none; and
// their deletion, which a row written meanwhile that continues one of them stops
const CONTINUED = `EXISTS (SELECT 1 FROM ${s.$table} c WHERE c.${s.previousRowId} = ${s.$table}.${s.rowId})`
const PAGE_COLUMNS = `${s.rowId} AS "rowId", ${s.createdAt} AS "createdAt", CASE WHEN ${CONTINUED} THEN 1 ELSE 0 END AS "continued"`
const PAGE = `SELECT ${PAGE_COLUMNS} FROM ${s.$table} WHERE ${s.createdAt} < ? ORDER BY ${s.createdAt}, ${s.rowId} LIMIT ?`
// (the `>=` is the index range's start: an OR alone was read as a scan from the oldest row, at every page)
const PAGE_AFTER = `SELECT ${PAGE_COLUMNS} FROM ${s.$table} WHERE ${s.createdAt} < ? AND ${s.createdAt} >= ? AND (${s.createdAt} > ? OR ${s.rowId} > ?) ORDER BY ${s.createdAt}, ${s.rowId} LIMIT ?`
const marks = (n: number) => Array(n).fill('?').join(', ')
const leavesAmong = (n: number) =>
  `SELECT ${s.rowId} AS "rowId", ${s.previousRowId} AS "previousRowId" FROM ${s.$table} WHERE ${s.rowId} IN (${marks(n)}) AND ${s.createdAt} < ? AND NOT ${CONTINUED}`
const pruneRows = (n: number) => `DELETE FROM ${s.$table} WHERE ${s.rowId} IN (${marks(n)}) AND NOT ${CONTINUED}`

/**
 * Reading a thread leaves its stored text behind as garbage as large as the thread, which the
 * collector would not reclaim before the continuation builds its upstream body. Once this much
 * history has been read since the last time, a full collection runs (13–34 ms measured after
 * a 28 MiB thread): the continuation's memory then grows by about twice its thread, not four or
 * five times (scripts/bench/experiments/thread-limit.ts). It is paid for by the reading: never
 * more often than once per this much text read from the store. The text of large rows comes in
 * pieces from a worker (json-rows.ts), and a full collection here would hold the loop 30–50 ms
 * itself: for those, one that runs beside the loop (`now` false), which bounded the growth as
 * well in scripts/bench/experiments/thread-limit.ts (2.1× the thread).
 */
const COLLECT_AFTER_BYTES = 8 * 1024 * 1024
let readSinceCollect = 0
function collectAfterLongReads(threadBytes: number, now = true) {
  readSinceCollect += threadBytes
  if (readSinceCollect < COLLECT_AFTER_BYTES) return
  readSinceCollect = 0
  Bun.gc(now)
}

const newRowId = () => `sr_${Bun.randomUUIDv7().replaceAll('-', '')}`

const DAY_MS = 86_400_000
/**
 * The pruner takes stored responses this much past the retention: a response is continued only
 * within the retention, and a turn that continued one has stored its own (which keeps it) long
 * before this, on whichever instance it ran.
 */
export const PRUNE_GRACE_MS = DAY_MS
/** A step of the pruner walks back threads this long at most (then gives the thread back). */
const STEP_MS = 8

/** A conversation's hold on a turn gives way after this long (a turn that never ended). */
const TURN_HOLD_MS = 30 * 60_000

export class ThreadStore {
  /** Saved, not yet written: read before the database by every lookup (by row id). */
  private readonly pending = new Map<string, Pending>()
  /** Pending rows written at the next turn, all at once (a reply's last bytes wait for its save). */
  private readonly writes = new SoonWrite(() => this.write())

  /** Conversations with a turn in progress (key id and name), and since when. */
  private readonly turns = new Map<string, number>()

  /** Large inputs parsed for their listing, by row (input-cache.ts). */
  private readonly inputs = new InputCache()

  /**
   * Holds `conversation` for a turn that continues it, until the turn's response is saved or the
   * request ends (the returned release, which may be called more than once). A second turn while
   * one is in progress is a 409: it would continue from the same response, and one of the two
   * would be lost from the conversation. Held in this instance; a hold older than TURN_HOLD_MS
   * (a request that never ended) gives way.
   */
  claimTurn(apiKeyId: string, conversation: string): () => void {
    const key = `${apiKeyId}\0${conversation}`
    const since = this.turns.get(key)
    if (since !== undefined && performance.now() - since < TURN_HOLD_MS) {
      throw new HttpError(409, `conversation: a response of conversation "${conversation.slice(0, 64)}" is still in progress; send the next turn once it has ended`)
    }
    const mine = performance.now()
    this.turns.set(key, mine)
    return () => {
      if (this.turns.get(key) === mine) this.turns.delete(key)
    }
  }

  constructor(
    private readonly sql: Sql,
    readonly maxThreadBytes = DEFAULT_MAX_THREAD_BYTES,
    /** `responses.retention_days` (0: kept until deleted). */
    private readonly retentionDays = 0,
    /** Where large rows are read and cut (the SQLite file's, for a worker's connection to read). */
    private readonly rows = new JsonRows(),
  ) {}

  /** Responses made before this may not be continued (0: every one may). */
  private keptSince(): number {
    return this.retentionDays > 0 ? Date.now() - this.retentionDays * DAY_MS : 0
  }

  /** Saves a response; resolves once it is committed (the pending map serves lookups before that). */
  save(r: StoredResponse): Promise<void> {
    const input = JSON.stringify(r.inputItems)
    const output = JSON.stringify(r.outputItems)
    const response = r.response ? JSON.stringify({ ...r.response, output: undefined }) : null
    const own = Buffer.byteLength(input) + Buffer.byteLength(output) + (response ? Buffer.byteLength(response) : 0)
    const row: Row = {
      rowId: newRowId(),
      id: r.id,
      apiKeyId: r.apiKeyId,
      model: r.model,
      createdAt: Date.now(),
      status: r.status,
      previousRowId: r.previous?.rowId ?? null,
      previousResponseId: r.previousResponseId,
      conversation: r.conversation,
      inputItems: input,
      outputItems: output,
      response,
      threadBytes: (r.previous?.threadBytes ?? 0) + own,
    }
    let commit!: () => void
    const committed = new Promise<void>((resolve) => (commit = resolve))
    const upstreamIds = r.outputItems.flatMap((it) => (typeof it.id === 'string' && responseOfItem(it.id) === undefined ? [it.id] : []))
    this.pending.set(row.rowId, { row, upstreamIds, committed, commit })
    this.writes.ask()
    return committed
  }

  /** Writes every pending response in one transaction. */
  flush(): Promise<void> {
    return this.writes.flush()
  }

  private async write(): Promise<boolean> {
    if (this.pending.size === 0) return true
    const rows = [...this.pending.values()]
    try {
      await this.sql.tx(async (q) => {
        for (const { row: w } of rows) await q.run(INSERT, INSERTED.keys.map((k) => w[k]))
        const items = rows.flatMap(({ row: w, upstreamIds }) => upstreamIds.map((id) => [w.apiKeyId, id, w.rowId]))
        for (let at = 0; at < items.length; at += ITEMS_PER_INSERT) {
          const chunk = items.slice(at, at + ITEMS_PER_INSERT)
          await q.run(insertItems(chunk.length), chunk.flat())
        }
      })
    } catch {
      // a busy or full disk, a store down: everything stays pending (and readable) and is tried again
      return false
    }
    for (const p of rows) {
      this.pending.delete(p.row.rowId)
      p.commit()
    }
    return true
  }

  /** A key's latest row of a response id: pending ones first. `query` picks the columns read; `retries`, how often a miss is read again. */
  private async byId<R extends Meta = Row>(apiKeyId: string, id: string, query = BY_ID, retries = SHARED_MISS_RETRIES): Promise<R | null> {
    let newest: Row | null = null
    for (const p of this.pending.values()) if (p.row.id === id && p.row.apiKeyId === apiKeyId) newest = p.row
    if (newest) return newest as unknown as R
    let row = await this.sql.get<R>(query, [apiKeyId, id])
    // another instance on the shared database writes a response a few ms after its client
    // has it: a continuation sent here at once may arrive first, so a miss is read again
    for (let i = 0; i < retries && !row && this.sql.dialect === 'pg'; i++) {
      await Bun.sleep(SHARED_MISS_WAIT_MS)
      row = await this.sql.get<R>(query, [apiKeyId, id])
    }
    return row
  }

  private async metaOfRow(rowId: string): Promise<Meta | null> {
    return this.pending.get(rowId)?.row ?? (await this.sql.get<Meta>(META_BY_ROW, [rowId]))
  }

  /**
   * A large row's input then output items, added to `into`; false when the row is gone. Its text
   * is read and cut into pieces on the worker (a pending row's, or PostgreSQL's, is read here and
   * cut there), then parsed a piece a turn: no step holds the loop for the whole of it.
   */
  private async largeItemsOfRow(rowId: string, into: Item[]): Promise<boolean> {
    let pieces: Record<'inputItems' | 'outputItems', string[]> | null | undefined
    const pending = this.pending.get(rowId)?.row
    if (!pending && this.sql.dialect === 'sqlite' && this.rows.reads) {
      // a worker that failed: read here, as before it
      pieces = (await this.rows.read(ITEMS_OF_ROW, [rowId], ['inputItems', 'outputItems']).catch(() => undefined)) as typeof pieces
    }
    if (pieces === undefined) {
      const row = pending ?? (await this.itemsOfRow(rowId))
      pieces = row && { inputItems: await this.rows.cut(row.inputItems), outputItems: await this.rows.cut(row.outputItems) }
    }
    if (!pieces) return false
    let chars = 0
    for (const p of [...pieces.inputItems, ...pieces.outputItems]) chars += p.length
    await parsePieces(pieces.inputItems, into)
    await parsePieces(pieces.outputItems, into)
    collectAfterLongReads(chars, false)
    return true
  }

  private async itemsOfRow(rowId: string): Promise<Pick<Row, 'inputItems' | 'outputItems'> | null> {
    return this.pending.get(rowId)?.row ?? (await this.sql.get<Pick<Row, 'inputItems' | 'outputItems'>>(ITEMS_OF_ROW, [rowId]))
  }

  /** The latest stored response of a conversation, or undefined for a new one. */
  async latestOf(apiKeyId: string, conversation: string): Promise<string | undefined> {
    let newest: string | undefined
    for (const p of this.pending.values()) if (p.row.conversation === conversation && p.row.apiKeyId === apiKeyId) newest = p.row.id
    // a conversation whose last turn is past the retention begins again
    return newest ?? (await this.sql.get<{ id: string }>(LATEST_OF_CONVERSATION, [apiKeyId, conversation, this.keptSince()]))?.id
  }

  /**
   * Every item of the thread ending at `id`, oldest first (each response's input, then its
   * output), that response's status, and its row for the continuation to link. A 400 naming
   * `field` and the id when it is unknown, another key's, was not stored or was deleted, or when
   * the thread is over the size bound (checked before anything of it is loaded).
   */
  async history(apiKeyId: string, id: string, field: string): Promise<{ items: Item[]; status: string; head: ThreadHead }> {
    const head = await this.byId<Meta>(apiKeyId, id, META_BY_ID)
    // a response past the retention is never continued, whether or not the pruner has come by
    // yet: the pruner takes only rows older still (PRUNE_GRACE_MS), so none a turn continues
    if (!head || head.createdAt < this.keptSince()) throw badRequest(`${field}: no stored response "${id}" (unknown, not stored — store: false — deleted, expired, or not this key's)`)
    if (head.threadBytes > this.maxThreadBytes) {
      throw badRequest(`${field}: the thread of "${id}" holds ${head.threadBytes} bytes, over this gateway's limit of ${this.maxThreadBytes} (responses.max_thread_bytes); start a new thread, or send the context again as input`)
    }
    const chain: Meta[] = [head]
    for (let at = head.previousRowId; at !== null; ) {
      const row = await this.metaOfRow(at)
      if (!row || row.apiKeyId !== apiKeyId) throw badRequest(`${field}: the thread of "${id}" lost its earlier response "${chain.at(-1)!.previousResponseId ?? '?'}" (deleted)`)
      chain.push(row)
      if (chain.length > MAX_DEPTH) throw badRequest(`${field}: the thread is longer than ${MAX_DEPTH} responses`)
      at = row.previousRowId
    }
    const items: Item[] = []
    // oldest first, one row's text at a time: read, parsed once and let go, then a turn of the
    // loop, so a long thread never holds all its text twice nor the loop for all its rows
    let inline = 0
    for (let i = chain.length - 1; i >= 0; i--) {
      const from = items.length
      const lost = () => badRequest(`${field}: the thread of "${id}" lost its earlier response "${chain[i]!.id}" (deleted)`)
      // a large row is read and cut off the loop, then parsed a piece a turn (json-rows.ts)
      if (chain[i]!.threadBytes - (chain[i + 1]?.threadBytes ?? 0) >= KEPT_FROM_CHARS) {
        if (!(await this.largeItemsOfRow(chain[i]!.rowId, items))) throw lost()
      } else {
        const row = await this.itemsOfRow(chain[i]!.rowId)
        if (!row) throw lost()
        inline += row.inputItems.length + row.outputItems.length
        for (const it of JSON.parse(row.inputItems) as Item[]) items.push(it)
        for (const it of JSON.parse(row.outputItems) as Item[]) items.push(it)
      }
      for (let k = from; k < items.length; k++) if (items[k]!.type === 'reasoning') reasonedBy.set(items[k]!, chain[i]!.model)
      if (i > 0) await nextTurn()
    }
    collectAfterLongReads(inline)
    return { items, status: head.status, head: { rowId: head.rowId, threadBytes: head.threadBytes } }
  }

  /**
   * One pass of the retention: its steps delete the stored responses made before `before` that no
   * response continues, oldest first, and then each one's earlier turns as they come to be
   * continued by none (a thread goes from its newest turn back; one whose newest turn is recent
   * is kept whole). Each step reads at most `limit` rows: a page of the old ones, past the last
   * page (the rows a thread keeps are read once a pass, not at every step), or the earlier turns
   * of those just deleted.
   */
  pruner(before: number, limit: number): () => Promise<PruneStep> {
    let after: [number, string] | undefined
    let earlier: string[] = []
    let read = false
    return async () => {
      if (earlier.length === 0) {
        if (read) return { deleted: 0, more: false }
        const page = await this.sql.all<{ rowId: string; createdAt: number; continued: number }>(after ? PAGE_AFTER : PAGE, after ? [before, after[0], after[0], after[1], limit] : [before, limit])
        read = page.length < limit
        const last = page.at(-1)
        if (last) after = [Number(last.createdAt), last.rowId]
        earlier = page.filter((r) => Number(r.continued) === 0).map((r) => r.rowId)
        if (earlier.length === 0) return { deleted: 0, more: !read }
      }
      // a thread's turns one level at a time, several levels a step (to `limit` rows, or a few ms)
      let deleted = 0
      for (const started = performance.now(); earlier.length > 0 && deleted < limit && performance.now() - started < STEP_MS; ) {
        const ids = earlier.splice(0, limit)
        // those still old and continued by none (a turn may have continued one meanwhile)
        const leaves = await this.sql.all<{ rowId: string; previousRowId: string | null }>(leavesAmong(ids.length), [...ids, before])
        if (leaves.length > 0) {
          deleted += await this.sql.run(pruneRows(leaves.length), leaves.map((r) => r.rowId))
          await this.sql.run(itemsOfGone(leaves.length), leaves.map((r) => r.rowId))
        }
        for (const r of leaves) if (r.previousRowId !== null) earlier.push(r.previousRowId)
      }
      return { deleted, more: earlier.length > 0 || !read }
    }
  }

  /** A key's stored response object (its output included), or undefined. */
  async retrieve(apiKeyId: string, id: string): Promise<Obj | undefined> {
    const row = await this.byId<Pick<Row, (typeof OBJECT_KEYS)[number]>>(apiKeyId, id, OBJECT_BY_ID)
    if (!row) return undefined
    const output = shownItems(JSON.parse(row.outputItems) as Item[])
    if (row.response) return { ...(JSON.parse(row.response) as Obj), output }
    // rows stored before the object was kept: what the row knows
    return { id: row.id, object: 'response', created_at: Math.floor(row.createdAt / 1000), status: row.status, model: row.model, previous_response_id: row.previousResponseId, output }
  }

  /**
   * The output item of the key's stored reply an `item_reference` names, or undefined: the item of
   * a reply the gateway made names its response (item-ids.ts). `refs` is the request's: each
   * response is read and parsed once, however many of its items are named; what the request
   * reads so is bounded as a thread is (`responses.max_thread_bytes`); and only its first miss
   * is read again on a shared database (another instance's reply a few ms late), not each one.
   */
  async referenced(apiKeyId: string, itemId: string, refs: References): Promise<Item | undefined> {
    const response = responseOfItem(itemId)
    if (response === undefined) return undefined
    let items = refs.seen.get(response)
    if (items === undefined) {
      const found = await this.byId<Meta & Pick<Row, 'outputItems'>>(apiKeyId, response, OUTPUT_BY_ID, refs.missed ? 0 : SHARED_MISS_RETRIES)
      // past the retention, as a continuation of it would be: as if it were gone
      const row = found && found.createdAt >= this.keptSince() ? found : null
      if (!row) refs.missed = true
      refs.bytes += row?.outputItems.length ?? 0
      if (refs.bytes > this.maxThreadBytes) {
        throw badRequest(`input: the items it references hold more than this gateway's limit of ${this.maxThreadBytes} bytes (responses.max_thread_bytes); send fewer, or previous_response_id`)
      }
      items = row && new Map((JSON.parse(row.outputItems) as Item[]).map((it) => [it.id, it]))
      refs.seen.set(response, items)
    }
    return items?.get(itemId)
  }

  /**
   * The item an upstream made under `itemId` (one of its own ids, not the gateway's), as the
   * key's stored response holds it (within the retention), or undefined; counted in `refs` as
   * `referenced` counts.
   */
  async upstreamItem(apiKeyId: string, itemId: string, refs: References): Promise<Item | undefined> {
    let outputItems: string | undefined
    for (const p of this.pending.values()) if (p.row.apiKeyId === apiKeyId && p.upstreamIds.includes(itemId)) outputItems = p.row.outputItems
    outputItems ??= (await this.sql.get<{ outputItems: string }>(OUTPUT_OF_ITEM, [apiKeyId, apiKeyId, this.keptSince(), itemId]))?.outputItems
    if (outputItems === undefined) return undefined
    refs.bytes += outputItems.length
    if (refs.bytes > this.maxThreadBytes) {
      throw badRequest(`input: the items it references hold more than this gateway's limit of ${this.maxThreadBytes} bytes (responses.max_thread_bytes); send fewer, or previous_response_id`)
    }
    return (JSON.parse(outputItems) as Item[]).find((it) => it.id === itemId)
  }

  /**
   * Which of `ids`, item ids an upstream made, are of a response the gateway stored for this key
   * (within the retention): the items the key was given, which it may name for OpenAI's store to
   * read. Another key's item, or one of a reply never stored, is not among them.
   */
  async owned(apiKeyId: string, ids: string[]): Promise<Set<string>> {
    const out = new Set<string>()
    const wanted = new Set(ids)
    for (const p of this.pending.values()) if (p.row.apiKeyId === apiKeyId) for (const id of p.upstreamIds) if (wanted.has(id)) out.add(id)
    // another instance's reply a few ms late (as byId): what is missing is read again, a few times
    for (let round = 0; round <= SHARED_MISS_RETRIES; round++) {
      const rest = [...wanted].filter((id) => !out.has(id))
      if (rest.length === 0 || (round > 0 && this.sql.dialect !== 'pg')) break
      if (round > 0) await Bun.sleep(SHARED_MISS_WAIT_MS)
      for (let at = 0; at < rest.length; at += OWNED_CHUNK) {
        const chunk = rest.slice(at, at + OWNED_CHUNK)
        const rows = await this.sql.all<{ itemId: string }>(ownedAmong(chunk.length), [apiKeyId, apiKeyId, this.keptSince(), ...chunk])
        for (const r of rows) out.add(r.itemId)
      }
    }
    return out
  }

  /**
   * The input items a key's stored response added, oldest first, or undefined. The row is found
   * on its few small columns; a large input is kept parsed a while (a listing is paged through),
   * and read and cut by the worker on SQLite, then parsed a piece a turn (elsewhere its text,
   * once read, is parsed in a turn of its own).
   */
  async inputItems(apiKeyId: string, id: string): Promise<Item[] | undefined> {
    const head = await this.byId<Meta>(apiKeyId, id, META_BY_ID)
    if (!head) return undefined
    return this.inputs.get(head.rowId, `${apiKeyId}\0${id}`, async () => {
      // a large row on SQLite is read and cut off the loop, as a thread's (json-rows.ts)
      if (!this.pending.has(head.rowId) && this.sql.dialect === 'sqlite' && (await this.ownBytes(head)) >= KEPT_FROM_CHARS && this.rows.reads) {
        const row = await this.rows.read(INPUT_OF_ROW, [head.rowId], ['inputItems']).catch(() => undefined)
        if (row === null) return undefined
        if (row) {
          const pieces = row.inputItems as string[]
          let chars = 0
          for (const p of pieces) chars += p.length
          // its pieces' brackets counted too: a few characters a piece
          return { chars, items: await parsePieces<Item>(pieces) }
        }
      }
      const text = this.pending.get(head.rowId)?.row.inputItems ?? (await this.sql.get<Pick<Row, 'inputItems'>>(INPUT_OF_ROW, [head.rowId]))?.inputItems
      // deleted between the two reads: as if it had not been found
      if (text === undefined) return undefined
      if (text.length >= KEPT_FROM_CHARS) await turnOfItsOwn()
      return { chars: text.length, items: JSON.parse(text) as Item[] }
    })
  }

  /** What a row added to its thread's stored bytes (its own columns). */
  private async ownBytes(row: Meta): Promise<number> {
    const previous = row.previousRowId === null ? null : await this.metaOfRow(row.previousRowId)
    return row.threadBytes - (previous?.threadBytes ?? 0)
  }

  /** Deletes every row a key stored under a response id; whether there was one. */
  async delete(apiKeyId: string, id: string): Promise<boolean> {
    let found = false
    this.inputs.forget(`${apiKeyId}\0${id}`)
    for (const [rowId, p] of this.pending) {
      if (p.row.id !== id || p.row.apiKeyId !== apiKeyId) continue
      // never written now; whoever waits on it goes on
      this.pending.delete(rowId)
      p.commit()
      found = true
    }
    await this.sql.run(DELETE_ITEMS, [apiKeyId, id])
    return (await this.sql.run(DELETE, [apiKeyId, id])) > 0 || found
  }
}
