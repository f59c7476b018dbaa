// Stores checked items as a worker reads them, in short transactions (a few hundred rows or
// a few MB), so the main thread's own writes never wait long for SQLite's one write lock.
// While it runs, a row in batch_ingests marks the items as not yet owned by a batch: the
// main thread removes it when it creates the batch, and a start after a crash removes the
// items it names.
import type { Database, Statement } from 'bun:sqlite'
import type { CheckedItem } from './validate.ts'

const MAX_ROWS = 500
const MAX_BYTES = 4 * 1024 * 1024
const DELETE_CHUNK = 2_000

export class ItemWriter {
  private rows: [number, CheckedItem][] = []
  private bytes = 0
  private insert?: Statement

  constructor(private readonly sqlite: Database, readonly batchId: string) {}

  begin() {
    this.sqlite.query('INSERT INTO batch_ingests (batch_id, started_at) VALUES (?, ?)').run(this.batchId, Date.now())
  }

  add(idx: number, item: CheckedItem) {
    this.rows.push([idx, item])
    this.bytes += item.body.length
    if (this.rows.length >= MAX_ROWS || this.bytes >= MAX_BYTES) this.flush()
  }

  flush() {
    if (this.rows.length === 0) return
    this.insert ??= this.sqlite.prepare(
      'INSERT INTO batch_items (batch_id, idx, custom_id, body, model, prompt_estimate, max_output_tokens) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    const rows = this.rows
    this.rows = []
    this.bytes = 0
    this.sqlite.transaction(() => {
      for (const [idx, it] of rows) this.insert!.run(this.batchId, idx, it.customId, it.body, it.model, it.promptEstimate, it.maxOutputTokens)
    }).immediate()
  }

  /** The batch was refused: its items go, in chunks, and so does the marker. */
  async discard() {
    this.rows = []
    const del = this.sqlite.prepare('DELETE FROM batch_items WHERE rowid IN (SELECT rowid FROM batch_items WHERE batch_id = ? LIMIT ?)')
    while (del.run(this.batchId, DELETE_CHUNK).changes > 0) await new Promise((r) => setTimeout(r, 0))
    this.sqlite.query('DELETE FROM batch_ingests WHERE batch_id = ?').run(this.batchId)
  }
}

/** What a crash in the middle of a create left: items no batch owns. Main thread, at start. */
export function sweepIngests(sqlite: Database): number {
  const left = sqlite.query('SELECT batch_id AS id FROM batch_ingests').all() as { id: string }[]
  let removed = 0
  for (const { id } of left) {
    removed += sqlite.query('DELETE FROM batch_items WHERE batch_id = ?').run(id).changes
    sqlite.query('DELETE FROM batch_ingests WHERE batch_id = ?').run(id)
  }
  return removed
}
