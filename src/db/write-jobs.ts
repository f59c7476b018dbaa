// The batched writes that can run on the SQLite write thread (checkpoint-worker.ts) instead of
// the request thread: the same functions run in-thread when there is no such thread (PostgreSQL,
// a batch worker's own connection, a test's bare storage). Each takes the transaction it runs in.
import type { GenerationRow } from '../generations/row.ts'
import { insertRows } from '../generations/store.ts'
import type { Param, Sql } from './sql.ts'

/** A key's settled spend added to its row (KeyStore.writeSpent). */
export async function addSpent(q: Sql, keyId: string, usd: number): Promise<void> {
  if (!(usd > 0)) return
  await q.run('UPDATE api_keys SET spent = spent + ? WHERE id = ?', [usd, keyId])
}

/** Cost by key of records that are priced. */
export function spendByKey(rows: GenerationRow[]): Map<string, number> {
  const m = new Map<string, number>()
  for (const r of rows) if (r.cost !== null && r.cost > 0) m.set(r.apiKeyId, (m.get(r.apiKeyId) ?? 0) + r.cost)
  return m
}

/** Records, their rollup and their keys' spend, in `q`; the rows actually inserted (an id already stored is not). */
export async function writeRecords(q: Sql, rows: GenerationRow[]): Promise<GenerationRow[]> {
  const inserted = await insertRows(q, rows)
  for (const [keyId, usd] of spendByKey(inserted)) await addSpent(q, keyId, usd)
  return inserted
}

/** Statements without results, in order (the responses threads' upserts). */
export async function writeStatements(q: Sql, statements: { text: string; params: Param[] }[]): Promise<void> {
  for (const s of statements) await q.run(s.text, s.params)
}

/** What the write thread runs, by name: each gets its transaction and the posted payload. */
export const WRITE_JOBS = {
  records: async (q: Sql, rows: GenerationRow[]) => (await writeRecords(q, rows)).map((r) => r.id),
  statements: (q: Sql, statements: { text: string; params: Param[] }[]) => writeStatements(q, statements),
}
export type WriteJobName = keyof typeof WRITE_JOBS
export type WriteJobPayload<K extends WriteJobName> = Parameters<(typeof WRITE_JOBS)[K]>[1]
export type WriteJobResult<K extends WriteJobName> = Awaited<ReturnType<(typeof WRITE_JOBS)[K]>>

/** The request thread's handle on the write thread (Storage.writer while it runs). */
export interface BackgroundWriter {
  run<K extends WriteJobName>(job: K, payload: WriteJobPayload<K>): Promise<WriteJobResult<K>>
}
