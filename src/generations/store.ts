// The generations table and its hourly rollup, written together. Raw prepared statements:
// this is the write path of every request and the seeding path of the benchmark.
import type { Statement } from 'bun:sqlite'
import type { Storage } from '../db/client.ts'
import { addRollup, toRollup, type GenerationRow, type RollupDelta } from './row.ts'

// OR IGNORE only guards a batch against one impossible row (ids are the gateway's own, fresh
// per record); an ignored row is reported by the caller, never dropped silently (D9).
const INSERT = `INSERT OR IGNORE INTO generations (
  id, reply_id, api_key_id, account, endpoint, stream, model, provider, created_at,
  prompt_tokens, completion_tokens, total_tokens, cache_creation_input_tokens, cache_read_input_tokens,
  reasoning_tokens, finish_reason, status, cost, unpriced, latency_ms, ttft_ms, error, http_status, batch_id
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const UPSERT_HOUR = `INSERT INTO usage_hourly
  (account, model, hour, requests, input_tokens, output_tokens, total_tokens, cost, unpriced_requests)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (account, hour, model) DO UPDATE SET
    requests = requests + excluded.requests,
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    total_tokens = total_tokens + excluded.total_tokens,
    cost = cost + excluded.cost,
    unpriced_requests = unpriced_requests + excluded.unpriced_requests`

export const COLUMNS = `id, reply_id AS replyId, api_key_id AS apiKeyId, account, endpoint, stream, model, provider, created_at AS createdAt,
  prompt_tokens AS promptTokens, completion_tokens AS completionTokens, total_tokens AS totalTokens,
  cache_creation_input_tokens AS cacheCreationInputTokens, cache_read_input_tokens AS cacheReadInputTokens,
  reasoning_tokens AS reasoningTokens, finish_reason AS finishReason, status, cost, unpriced,
  latency_ms AS latencyMs, ttft_ms AS ttftMs, error, http_status AS httpStatus, batch_id AS batchId`

const BY_ID = `SELECT ${COLUMNS} FROM generations WHERE id = ?`
// a reply id an upstream reused: the latest request's record (index generations_reply)
const BY_REPLY = `SELECT ${COLUMNS} FROM generations WHERE reply_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`
const BY_REPLY_OF_KEY = `SELECT ${COLUMNS} FROM generations WHERE reply_id = ? AND api_key_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`

export type Raw = Omit<GenerationRow, 'stream' | 'unpriced'> & { stream: number; unpriced: number }

export class GenerationStore {
  private insert: Statement
  private upsertHour: Statement
  private byId: Statement<Raw, [string]>
  private byReply: Statement<Raw, [string]>
  private byReplyOfKey: Statement<Raw, [string, string]>

  constructor(private storage: Storage) {
    const s = storage.sqlite
    this.insert = s.prepare(INSERT)
    this.upsertHour = s.prepare(UPSERT_HOUR)
    this.byId = s.prepare(BY_ID) as Statement<Raw, [string]>
    this.byReply = s.prepare(BY_REPLY) as Statement<Raw, [string]>
    this.byReplyOfKey = s.prepare(BY_REPLY_OF_KEY) as Statement<Raw, [string, string]>
  }

  /**
   * Insert rows and roll up only those actually inserted, so a row can never be counted
   * without being stored. Returns the inserted rows. Call inside a transaction for batches.
   */
  insertRows(rows: GenerationRow[]): GenerationRow[] {
    const inserted: GenerationRow[] = []
    // one rollup upsert per (account, model, hour) of the batch, not one per row: under load a
    // batch is dozens of records of a few models
    const hours = new Map<string, RollupDelta>()
    for (const r of rows) {
      const res = this.insert.run(
        r.id, r.replyId, r.apiKeyId, r.account, r.endpoint, r.stream ? 1 : 0, r.model, r.provider, r.createdAt,
        r.promptTokens, r.completionTokens, r.totalTokens, r.cacheCreationInputTokens, r.cacheReadInputTokens,
        r.reasoningTokens, r.finishReason, r.status, r.cost, r.unpriced ? 1 : 0, r.latencyMs, r.ttftMs, r.error,
        r.httpStatus, r.batchId,
      )
      if (res.changes !== 1) continue
      inserted.push(r)
      const d = toRollup(r)
      const k = `${d.hour}\u0000${d.model}\u0000${d.account}`
      const sum = hours.get(k)
      if (sum === undefined) hours.set(k, d)
      else addRollup(sum, d)
    }
    for (const d of hours.values()) {
      this.upsertHour.run(d.account, d.model, d.hour, d.requests, d.inputTokens, d.outputTokens, d.totalTokens, d.cost, d.unpricedRequests)
    }
    return inserted
  }

  /**
   * A record by the gateway's id, else by the id the client saw (the latest of several).
   * With `keyId`, only that key's records count, so another key's reuse of the same reply id
   * neither hides nor reveals anything.
   */
  get(id: string, keyId?: string): GenerationRow | undefined {
    let r = this.byId.get(id)
    if (r && keyId !== undefined && r.apiKeyId !== keyId) r = null
    r ??= keyId === undefined ? this.byReply.get(id) : this.byReplyOfKey.get(id, keyId)
    return r ? { ...r, stream: r.stream === 1, unpriced: r.unpriced === 1 } : undefined
  }

  /** Delete up to `limit` records created before `before` (epoch ms); the rollup stays. Returns how many went. */
  pruneSome(before: number, limit: number): number {
    return this.storage.sqlite
      .query('DELETE FROM generations WHERE rowid IN (SELECT rowid FROM generations WHERE created_at < ? LIMIT ?)')
      .run(before, limit).changes
  }
}
