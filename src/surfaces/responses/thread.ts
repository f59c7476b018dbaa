// Responses-style threads (§4.5 state): each stored response keeps the input items its
// request added and its output items; `previous_response_id` chains them. Writes are
// synchronous and happen before the reply's last byte, so a continuation sent right after
// finds them (pitfall 20). Another key's response is as unknown as a missing one.
import type { Database, Statement } from 'bun:sqlite'
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

/** A thread deeper than this is refused rather than walked (each step is one indexed read). */
const MAX_DEPTH = 10_000

export class ThreadStore {
  private readonly insert: Statement
  private readonly byId: Statement<Row, [string]>
  private readonly latest: Statement<{ id: string }, [string, string]>

  constructor(sqlite: Database) {
    this.insert = sqlite.prepare(
      `INSERT OR REPLACE INTO responses (id, api_key_id, model, created_at, status, previous_response_id, conversation, input_items, output_items)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    this.byId = sqlite.prepare('SELECT id, api_key_id, status, previous_response_id, input_items, output_items FROM responses WHERE id = ?') as Statement<Row, [string]>
    this.latest = sqlite.prepare('SELECT id FROM responses WHERE api_key_id = ? AND conversation = ? ORDER BY created_at DESC, rowid DESC LIMIT 1') as Statement<{ id: string }, [string, string]>
  }

  save(r: StoredResponse): void {
    this.insert.run(r.id, r.apiKeyId, r.model, Date.now(), r.status, r.previousResponseId, r.conversation, JSON.stringify(r.inputItems), JSON.stringify(r.outputItems))
  }

  /** The latest stored response of a conversation, or undefined for a new one. */
  latestOf(apiKeyId: string, conversation: string): string | undefined {
    return this.latest.get(apiKeyId, conversation)?.id
  }

  /**
   * Every item of the thread ending at `id`, oldest first (each response's input, then its
   * output), and that response's status. A 400 naming `field` and the id when it is unknown,
   * another key's, or was not stored.
   */
  history(apiKeyId: string, id: string, field: string): { items: Item[]; status: string } {
    const chain: Row[] = []
    for (let at: string | null = id; at !== null; ) {
      const row = this.byId.get(at)
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
