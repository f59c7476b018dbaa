// Responses-style threads (§4.5 state): each stored response keeps the input items its
// request added and its output items; `previous_response_id` chains them. A response is
// saved before the reply's terminal event goes out, into a pending map that every lookup
// reads first, so a continuation sent right after finds it (pitfall 20); the map is written
// in one transaction a few ms later (one INSERT per reply was a fifth of the surface's CPU),
// and at once on shutdown. Another key's response is as unknown as a missing one.
import type { Sql } from '../../db/sql.ts'
import { badRequest } from '../../http/errors.ts'
import type { Item } from './items.ts'

export interface StoredResponse {
  id: string
  apiKeyId: string
  model: string
  status: string
  previousResponseId: string | null
  conversation: string | null
  inputItems: Item[]
  outputItems: Item[]
}

interface Row {
  id: string
  api_key_id: string
  status: string
  previous_response_id: string | null
  input_items: string
  output_items: string
}

/** A response another instance has not written yet: read again this often, this long apart. */
const SHARED_MISS_RETRIES = 4
const SHARED_MISS_WAIT_MS = 25

/** A thread deeper than this is refused rather than walked (each step is one indexed read). */
const MAX_DEPTH = 10_000

const INSERT = `INSERT INTO responses (id, api_key_id, model, created_at, status, previous_response_id, conversation, input_items, output_items)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET api_key_id = excluded.api_key_id, model = excluded.model, created_at = excluded.created_at,
    status = excluded.status, previous_response_id = excluded.previous_response_id, conversation = excluded.conversation,
    input_items = excluded.input_items, output_items = excluded.output_items`
const BY_ID = 'SELECT id, api_key_id, status, previous_response_id, input_items, output_items FROM responses WHERE id = ?'
// among responses of one ms, the last stored (SQLite's rowid; the id elsewhere)
const LATEST = {
  sqlite: 'SELECT id FROM responses WHERE api_key_id = ? AND conversation = ? ORDER BY created_at DESC, rowid DESC LIMIT 1',
  pg: 'SELECT id FROM responses WHERE api_key_id = ? AND conversation = ? ORDER BY created_at DESC, id DESC LIMIT 1',
}

export class ThreadStore {
  /** Saved, not yet written: read before the database by every lookup. */
  private readonly pending = new Map<string, { row: Row; model: string; createdAt: number; conversation: string | null }>()
  private timer?: ReturnType<typeof setTimeout>

  /** The write in progress: one at a time. */
  private writing: Promise<void> = Promise.resolve()

  constructor(private readonly sql: Sql, private readonly flushDelayMs = 25) {}

  save(r: StoredResponse): void {
    const row: Row = {
      id: r.id,
      api_key_id: r.apiKeyId,
      status: r.status,
      previous_response_id: r.previousResponseId,
      input_items: JSON.stringify(r.inputItems),
      output_items: JSON.stringify(r.outputItems),
    }
    // a re-saved id moves to the end: the map's order is the save order
    this.pending.delete(r.id)
    this.pending.set(r.id, { row, model: r.model, createdAt: Date.now(), conversation: r.conversation })
    this.timer ??= setTimeout(() => void this.flush(), this.flushDelayMs)
  }

  /** Writes every pending response in one transaction. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.writing = this.writing.then(() => this.write())
    return this.writing
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return
    const rows = [...this.pending.values()]
    try {
      await this.sql.tx(async (q) => {
        for (const { row, model, createdAt, conversation } of rows) {
          await q.run(INSERT, [row.id, row.api_key_id, model, createdAt, row.status, row.previous_response_id, conversation, row.input_items, row.output_items])
        }
      })
    } catch {
      // a busy or full disk, a store down: everything stays pending (and readable) and is tried again
      this.timer ??= setTimeout(() => void this.flush(), 100)
      return
    }
    // only what was written leaves the map (a save during the write stays pending)
    for (const r of rows) if (this.pending.get(r.row.id) === r) this.pending.delete(r.row.id)
  }

  private async row(id: string): Promise<Row | null> {
    const local = this.pending.get(id)?.row
    if (local) return local
    let row = await this.sql.get<Row>(BY_ID, [id])
    // another instance on the shared database writes a response a few ms after its client
    // has it: a continuation sent here at once may arrive first, so a miss is read again
    for (let i = 0; i < SHARED_MISS_RETRIES && !row && this.sql.dialect === 'pg'; i++) {
      await Bun.sleep(SHARED_MISS_WAIT_MS)
      row = await this.sql.get<Row>(BY_ID, [id])
    }
    return row
  }

  /** The latest stored response of a conversation, or undefined for a new one. */
  async latestOf(apiKeyId: string, conversation: string): Promise<string | undefined> {
    let newest: string | undefined
    for (const p of this.pending.values()) if (p.conversation === conversation && p.row.api_key_id === apiKeyId) newest = p.row.id
    return newest ?? (await this.sql.get<{ id: string }>(LATEST[this.sql.dialect], [apiKeyId, conversation]))?.id
  }

  /**
   * Every item of the thread ending at `id`, oldest first (each response's input, then its
   * output), and that response's status. A 400 naming `field` and the id when it is unknown,
   * another key's, or was not stored.
   */
  async history(apiKeyId: string, id: string, field: string): Promise<{ items: Item[]; status: string }> {
    const chain: Row[] = []
    for (let at: string | null = id; at !== null; ) {
      const row = await this.row(at)
      if (!row || row.api_key_id !== apiKeyId) {
        const what = at === id ? `${field}: no stored response "${id.slice(0, 80)}"` : `${field}: the thread of "${id.slice(0, 80)}" lost its earlier response "${at.slice(0, 80)}"`
        throw badRequest(`${what} (unknown, not stored — store: false — or not this key's)`)
      }
      chain.push(row)
      if (chain.length > MAX_DEPTH) throw badRequest(`${field}: the thread is longer than ${MAX_DEPTH} responses`)
      at = row.previous_response_id
    }
    const status = chain[0].status
    const items: Item[] = []
    for (const row of chain.reverse()) items.push(...(JSON.parse(row.input_items) as Item[]), ...(JSON.parse(row.output_items) as Item[]))
    return { items, status }
  }
}
