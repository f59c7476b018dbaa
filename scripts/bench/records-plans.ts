// The query plans of the records' hot statements on a seeded store (records-scale.ts): each
// must read an index, never the table. Printed one line a statement.
import { names } from '../../src/db/columns.ts'
import type { Storage } from '../../src/db/client.ts'
import { generations, usageHourly } from '../../src/db/schema.ts'

const g = names(generations)
const u = names(usageHourly)

export async function printPlans(storage: Storage, keyId: string) {
  const d = storage.dialect
  const tie = d === 'sqlite' ? 'rowid' : g.id
  const rowid = d === 'sqlite' ? 'rowid' : 'ctid'
  const now = Date.now()
  const statements: [string, string][] = [
    ['prune step', `DELETE FROM ${g.$table} WHERE ${rowid} IN (SELECT ${rowid} FROM ${g.$table} WHERE ${g.createdAt} < ${now - 88 * 86_400_000} LIMIT 1000)`],
    ['by gateway id', `SELECT * FROM ${g.$table} WHERE ${g.id} = 'gen-0'`],
    ['by reply id', `SELECT * FROM ${g.$table} WHERE ${g.replyId} = 'chatcmpl-0' ORDER BY ${g.createdAt} DESC, ${tie} DESC LIMIT 1`],
    ['by reply id of a key', `SELECT * FROM ${g.$table} WHERE ${g.replyId} = 'chatcmpl-0' AND ${g.apiKeyId} = '${keyId}' ORDER BY ${g.createdAt} DESC, ${tie} DESC LIMIT 1`],
    ['first page (a key)', `SELECT * FROM ${g.$table} WHERE ${g.apiKeyId} = '${keyId}' ORDER BY ${g.createdAt} DESC, ${tie} DESC LIMIT 51`],
    ['first page (admin)', `SELECT * FROM ${g.$table} ORDER BY ${g.createdAt} DESC, ${tie} DESC LIMIT 51`],
    ['report, edge hour', `SELECT ${g.model}, count(*) FROM ${g.$table} WHERE ${g.account} = 'default' AND ${g.createdAt} >= ${now - 3_600_000} AND ${g.createdAt} < ${now} GROUP BY ${g.model}`],
    ['report, whole hours', `SELECT (${u.hour} / 86400000) * 86400000 AS at, ${u.model}, sum(${u.requests}) FROM ${u.$table} WHERE ${u.account} = 'default' AND ${u.hour} >= ${now - 30 * 86_400_000} AND ${u.hour} < ${now} GROUP BY 1, ${u.model}`],
  ]
  for (const [name, sql] of statements) {
    const plan =
      d === 'sqlite'
        ? (await storage.sql.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)).map((r) => r.detail)
        : (await storage.sql.all<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) ${sql}`)).map((r) => r['QUERY PLAN'].trim())
    console.log(`  plan, ${name.padEnd(22)} ${plan.join(' | ')}`)
  }
}
