// GET /api/v1/usage: the calling key's account, over a window, by bucket; with the
// admin token (the dashboard), every account or the one named by `account`.
import { Elysia } from 'elysia'
import { viewerOf } from '../auth/viewer.ts'
import { echo, HttpError } from '../http/errors.ts'
import type { Services } from '../services.ts'
import { parseUsageQuery } from './params.ts'
import { UsageQuery } from './query.ts'
import { reportResponse } from './encode.ts'
import { buildReport } from './report.ts'

const DAY_MS = 86_400_000

export function usageRoutes(s: Pick<Services, 'catalog' | 'recorder' | 'storage'>) {
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
    const v = viewerOf(request)
    const asked = new URL(request.url).searchParams.get('account') ?? undefined
    if (asked !== undefined && asked.trim() === '') throw new HttpError(400, 'account: must not be empty')
    // the admin reads one account or all of them; a key reads its own, and another is not found
    if (!v.admin && asked !== undefined && asked !== v.key.account) throw new HttpError(404, `No such account: ${echo(asked)}`)
    const account = v.admin ? asked : v.key.account
    // a report right after a request must include it, a stream cut short too (its bill is
    // still being counted: settled waits for it, at once when nothing is)
    await s.recorder.settled(undefined, account === undefined ? undefined : { account })
    await s.recorder.flush()
    const rows = await query.rows(account, w, now - s.recorder.retentionDays * DAY_MS, now)
    return reportResponse(buildReport(w, rows))
  })
}
