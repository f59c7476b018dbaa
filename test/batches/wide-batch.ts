// A batch of many ended items, made fast: 60 items run (every seventh an upstream error), then
// their rows copied under new indexes and custom ids. Running 50,000 would take a test's time.
import { chat, type BatchRig } from './helpers.ts'

/** The batch's id, its `items` ended (51 of each 60 succeeded). */
export async function wideBatch(rig: BatchRig, items: number): Promise<string> {
  const requests = Array.from({ length: 60 }, (_, i) => ({ custom_id: `c${i}`, ...chat(i % 2 ? 'mock-gpt' : 'mock-claude', i % 7 === 3 ? 'mock: error 400' : `mock: text line ${i} ünï 🚀`) }))
  const id = ((await (await rig.call('POST', '/api/v1/batches', { requests })).json()) as { id: string }).id
  await rig.ended(id)
  const sql = rig.gw.services.storage.sql
  const rows = await sql.all<Record<string, unknown>>('SELECT * FROM batch_items WHERE batch_id = ? ORDER BY idx', [id])
  const cols = Object.keys(rows[0]!)
  for (let i = 60; i < items; i += 200) {
    const n = Math.min(200, items - i)
    const values = Array.from({ length: n }, () => `(${cols.map(() => '?').join(',')})`).join(',')
    const params = Array.from({ length: n }, (_, j) => cols.map((c) => (c === 'idx' ? i + j : c === 'custom_id' ? `c${i + j}` : rows[(i + j) % 60]![c]))).flat()
    await sql.run(`INSERT INTO batch_items (${cols.join(',')}) VALUES ${values}`, params as never)
  }
  await sql.run('UPDATE batches SET total = ? WHERE id = ?', [items, id])
  return id
}
