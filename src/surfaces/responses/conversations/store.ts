// Conversations made through the Conversations API (`conv_…`) and their items. Every read of a
// conversation names its key: another key's conversation is as unknown as a missing one. A
// conversation's items are kept in the order they were added (`seq`: a time-ordered id, then
// the place in what was added at once); each has an id no other item of it has.
import { names, selectList } from '../../../db/columns.ts'
import { conversationItems, conversations } from '../../../db/schema.ts'
import type { Dialect, Sql } from '../../../db/sql.ts'
import type { ThreadServices } from '../../../services.ts'
import type { Item } from '../items.ts'
import { keptItem, newConversationId, newItemId, unreasoned } from './shapes.ts'
import { nextTurn } from '../../../lib/turn.ts'
import { shownItem } from '../held-search.ts'

type Obj = Record<string, unknown>
export type Metadata = Record<string, string>

export interface Conversation {
  id: string
  object: 'conversation'
  created_at: number
  metadata: Metadata
}

export interface Page {
  data: Obj[]
  hasMore: boolean
}

/** A kept item as the client is shown it: without the fields of the gateway's (held-search.ts, shapes.ts). */
export const shownKept = (it: Obj): Obj => shownItem(unreasoned(it).item)

const c = names(conversations)
const i = names(conversationItems)
const ROW = `SELECT ${selectList(conversations)} FROM ${c.$table} WHERE ${c.id} = ? AND ${c.apiKeyId} = ?`
// the conversation's row held until the items are added (PostgreSQL): its delete waits for them
// and then deletes them too, or comes first and they are not added; and two adds take turns, so
// an id one of them checked as free is still free when it writes
const exists = (dialect: Dialect) => `SELECT 1 AS "one" FROM ${c.$table} WHERE ${c.id} = ?${dialect === 'pg' ? ' FOR UPDATE' : ''}`
const INSERT = `INSERT INTO ${c.$table} (${c.id}, ${c.apiKeyId}, ${c.createdAt}, ${c.metadata}) VALUES (?, ?, ?, ?)`
const SET_METADATA = `UPDATE ${c.$table} SET ${c.metadata} = ? WHERE ${c.id} = ? AND ${c.apiKeyId} = ?`
const DELETE = `DELETE FROM ${c.$table} WHERE ${c.id} = ? AND ${c.apiKeyId} = ?`
const DELETE_ITEMS = `DELETE FROM ${i.$table} WHERE ${i.conversationId} = ?`
const insertItems = (n: number) => `INSERT INTO ${i.$table} (${i.conversationId}, ${i.seq}, ${i.itemId}, ${i.item}) VALUES ${Array(n).fill('(?, ?, ?, ?)').join(', ')}`
const marks = (n: number) => Array(n).fill('?').join(', ')
const takenAmong = (n: number) => `SELECT ${i.itemId} AS "itemId" FROM ${i.$table} WHERE ${i.conversationId} = ? AND ${i.itemId} IN (${marks(n)})`
const ITEM = `SELECT ${i.item} AS "item" FROM ${i.$table} WHERE ${i.conversationId} = ? AND ${i.itemId} = ?`
const SEQ_OF = `SELECT ${i.seq} AS "seq" FROM ${i.$table} WHERE ${i.conversationId} = ? AND ${i.itemId} = ?`
const DELETE_ITEM = `DELETE FROM ${i.$table} WHERE ${i.conversationId} = ? AND ${i.itemId} = ?`
const SIZE = `SELECT coalesce(sum(length(${i.item})), 0) AS "bytes" FROM ${i.$table} WHERE ${i.conversationId} = ?`
/**
 * `seq` compared as bytes (hex digits in the order they were added): on PostgreSQL the column
 * has the database's collation, which may not be byte order (an ICU one that orders digits as
 * numbers puts "…700000a" before "…7000009"), so it is told; SQLite's text compares as bytes.
 */
const seqOf = (dialect: Dialect) => (dialect === 'pg' ? `${i.seq} COLLATE "C"` : i.seq)
// a conversation's items in order, a slice at a time after the last one read
const slice = (dialect: Dialect, after: boolean) =>
  `SELECT ${i.seq} AS "seq", ${i.item} AS "item" FROM ${i.$table} WHERE ${i.conversationId} = ?${after ? ` AND ${seqOf(dialect)} > ?` : ''} ORDER BY ${seqOf(dialect)} LIMIT ?`
const page = (dialect: Dialect, order: 'asc' | 'desc', after: boolean) =>
  `SELECT ${i.item} AS "item" FROM ${i.$table} WHERE ${i.conversationId} = ?${after ? ` AND ${seqOf(dialect)} ${order === 'asc' ? '>' : '<'} ?` : ''} ORDER BY ${seqOf(dialect)} ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT ?`

/** An item id of its own that `GET` / `DELETE …/items/{item_id}` can name: 1 to 256 characters, as other ids. */
const nameable = (id: unknown): id is string => typeof id === 'string' && id.length >= 1 && id.length <= 256

/** Rows one INSERT writes at most (4 parameters each). */
const PER_INSERT = 100

/**
 * Items a turn's history reads at once, then a turn of the loop: a conversation of 10,000 items
 * (10 MB) read and parsed in one go held the loop for a few hundred ms.
 */
const PER_READ = 256

const objectOf = (r: { id: string; createdAt: number; metadata: string | null }): Conversation => ({
  id: r.id,
  object: 'conversation',
  created_at: Math.floor(Number(r.createdAt) / 1000),
  metadata: r.metadata ? (JSON.parse(r.metadata) as Metadata) : {},
})

export class ConversationStore {
  /** Turns' writes under way, which a stop waits for before the database closes (settled). */
  private readonly writing = new Set<Promise<unknown>>()
  private readonly exists: string
  private readonly slices: [string, string]
  private readonly pages: Record<'asc' | 'desc', [string, string]>

  constructor(private readonly sql: Sql) {
    const d = sql.dialect
    this.exists = exists(d)
    this.slices = [slice(d, false), slice(d, true)]
    this.pages = { asc: [page(d, 'asc', false), page(d, 'asc', true)], desc: [page(d, 'desc', false), page(d, 'desc', true)] }
  }

  /** A new conversation of the key, with its first items (listed as they were stored). */
  async create(apiKeyId: string, metadata: Metadata | null, items: Item[]): Promise<Conversation> {
    const id = newConversationId()
    const createdAt = Date.now()
    await this.sql.tx(async (q) => {
      await q.run(INSERT, [id, apiKeyId, createdAt, metadata ? JSON.stringify(metadata) : null])
      await this.insert(q, id, items)
    })
    return objectOf({ id, createdAt, metadata: metadata ? JSON.stringify(metadata) : null })
  }

  /** The key's conversation, or undefined (unknown, deleted or another key's). */
  async get(apiKeyId: string, id: string): Promise<Conversation | undefined> {
    const r = await this.sql.get<{ id: string; createdAt: number; metadata: string | null }>(ROW, [id, apiKeyId])
    return r ? objectOf(r) : undefined
  }

  /** Replaces the key's conversation's metadata; the conversation, or undefined. */
  async setMetadata(apiKeyId: string, id: string, metadata: Metadata | null): Promise<Conversation | undefined> {
    if ((await this.sql.run(SET_METADATA, [metadata ? JSON.stringify(metadata) : null, id, apiKeyId])) === 0) return undefined
    return this.get(apiKeyId, id)
  }

  /** Deletes the key's conversation and its items; whether there was one. */
  async delete(apiKeyId: string, id: string): Promise<boolean> {
    return this.sql.tx(async (q) => {
      if ((await q.run(DELETE, [id, apiKeyId])) === 0) return false
      await q.run(DELETE_ITEMS, [id])
      return true
    })
  }

  /**
   * Adds items at the end of a conversation (whose key was checked); them as listed, with their
   * ids. One deleted meanwhile (a turn in progress as it was) gets none, and undefined says so:
   * nothing is left of it.
   */
  append(conversationId: string, items: Item[]): Promise<Obj[] | undefined> {
    return this.sql.tx(async (q) => ((await q.get(this.exists, [conversationId])) ? this.insert(q, conversationId, items) : undefined))
  }

  /** `write`, waited for by a stop (a turn's reply may have gone out before it was done). */
  track<T>(write: Promise<T>): Promise<T> {
    this.writing.add(write)
    const done = () => void this.writing.delete(write)
    write.then(done, done)
    return write
  }

  /** Once every tracked write has ended. */
  async settled(): Promise<void> {
    while (this.writing.size > 0) await Promise.allSettled([...this.writing])
  }

  private async insert(q: Sql, conversationId: string, items: Item[]): Promise<Obj[]> {
    if (items.length === 0) return []
    // an id the conversation holds already (an item sent again) is given a new one: an id names one
    // item; so is one no item route could name (empty, or past what a URL path holds)
    const own = [...new Set(items.map((it) => it.id).filter(nameable))]
    const taken = new Set<string>()
    for (let at = 0; at < own.length; at += PER_INSERT) {
      const chunk = own.slice(at, at + PER_INSERT)
      for (const r of await q.all<{ itemId: string }>(takenAmong(chunk.length), [conversationId, ...chunk])) taken.add(r.itemId)
    }
    const base = Bun.randomUUIDv7().replaceAll('-', '')
    const listed = items.map((it) => {
      const id = nameable(it.id) && !taken.has(it.id) ? it.id : newItemId(it)
      taken.add(id)
      return keptItem(it, id)
    })
    for (let at = 0; at < listed.length; at += PER_INSERT) {
      const chunk = listed.slice(at, at + PER_INSERT)
      const params = chunk.flatMap((it, k) => [conversationId, base + (at + k).toString(16).padStart(6, '0'), it.id as string, JSON.stringify(it)])
      await q.run(insertItems(chunk.length), params)
    }
    return listed
  }

  /** Every item of a conversation, oldest first (the history a turn in it continues), and their stored bytes. */
  async items(conversationId: string): Promise<{ items: Item[]; bytes: number }> {
    let bytes = 0
    const items: Item[] = []
    // a slice at a time, each after the last item read, with a turn of the loop between: items
    // added meanwhile come after every one read, as they would after a read at once
    for (let after: string | undefined; ; ) {
      const rows = await this.sql.all<{ seq: string; item: string }>(this.slices[after === undefined ? 0 : 1], after === undefined ? [conversationId, PER_READ] : [conversationId, after, PER_READ])
      for (const r of rows) {
        bytes += r.item.length
        items.push(JSON.parse(r.item) as Item)
      }
      if (rows.length < PER_READ) return { items, bytes }
      after = rows.at(-1)!.seq
      await nextTurn()
    }
  }

  /** The characters a conversation's stored items hold, without reading them out. */
  async size(conversationId: string): Promise<number> {
    return Number((await this.sql.get<{ bytes: number | string }>(SIZE, [conversationId]))?.bytes ?? 0)
  }

  /** A page of a conversation's items after the item `after` (undefined when that item is not in it). */
  async page(conversationId: string, q: { limit: number; order: 'asc' | 'desc'; after?: string }): Promise<Page | undefined> {
    let seq: string | undefined
    if (q.after !== undefined) {
      seq = (await this.sql.get<{ seq: string }>(SEQ_OF, [conversationId, q.after]))?.seq
      if (seq === undefined) return undefined
    }
    const params = seq === undefined ? [conversationId, q.limit + 1] : [conversationId, seq, q.limit + 1]
    const rows = await this.sql.all<{ item: string }>(this.pages[q.order][seq === undefined ? 0 : 1], params)
    return { data: rows.slice(0, q.limit).map((r) => shownKept(JSON.parse(r.item) as Obj)), hasMore: rows.length > q.limit }
  }

  /** One item of a conversation, or undefined. */
  async item(conversationId: string, itemId: string): Promise<Obj | undefined> {
    const r = await this.sql.get<{ item: string }>(ITEM, [conversationId, itemId])
    return r ? shownKept(JSON.parse(r.item) as Obj) : undefined
  }

  /** Deletes one item of a conversation; whether it was there. */
  async deleteItem(conversationId: string, itemId: string): Promise<boolean> {
    return (await this.sql.run(DELETE_ITEM, [conversationId, itemId])) > 0
  }
}

const stores = new WeakMap<ThreadServices, ConversationStore>()

/** The one conversation store of a gateway's services (the routes and the responses surface share it). */
export function conversationStoreOf(s: ThreadServices): ConversationStore {
  let store = stores.get(s)
  if (!store) {
    stores.set(s, (store = new ConversationStore(s.storage.sql)))
    // before the database closes (the close hooks come first)
    const made = store
    s.onClose.push(() => made.settled())
  }
  return store
}
