// GET /api/v1/usage (spec §4.8): the calling key's account, over a window, by bucket.
import { Elysia } from 'elysia'
import { keyOf } from '../auth/context.ts'
import type { Services } from '../services.ts'
import { parseUsageQuery } from './params.ts'
import { UsageQuery } from './query.ts'
import { buildReport } from './report.ts'

const DAY_MS = 86_400_000

export function usageRoutes(s: Services) {
  const query = new UsageQuery(s.storage.sql)
  // aliases from the catalog's list, not resolve(): resolve() learns new ids, and a report
  // filter must not grow the catalog (`model=mock-<random>` in a loop)
  const canonical = (id: string) => {
    const m = s.catalog.list().find((c) => c.id === id || c.aliases.includes(id))
    return m?.id ?? id
  }
  return new Elysia({ name: 'usage' }).get('/api/v1/usage', async ({ request }) => {
    const now = Date.now()
    const w = parseUsageQuery(new URL(request.url).searchParams, now, canonical)
    const account = keyOf(request).account
    // a report right after a request must include it
    await s.recorder.flush()
    const rows = await query.rows(account, w, now - s.recorder.retentionDays * DAY_MS)
    return Response.json(buildReport(w, rows))
  })
}
