// What the dashboard reads besides the spec's routes, under /api/v1/dashboard (an API key: its
// own things; the admin token: everyone's), and the admin's batch cancel under /admin.
//   GET  /api/v1/dashboard/session            who is signed in (a key: its credits and spend)
//   GET  /api/v1/dashboard/providers          who serves each family; last hour's errors and p50
//   GET  /api/v1/dashboard/deployments        each provider's deployments: state, last hour (memory only)
//   GET  /api/v1/dashboard/batches            newest first, with progress
//   GET  /api/v1/dashboard/batches/:id        one batch, with progress (polled while it runs)
//   GET  /api/v1/dashboard/batches/:id/export the batch export route's download
//   POST /admin/v1/batches/:id/cancel         cancel any key's batch (admin)
import { and, desc, eq, lt, or } from 'drizzle-orm'
import { Elysia } from 'elysia'
import { publicKey } from '../auth/admin.ts'
import { requireAdmin, viewerOf, type Viewer } from '../auth/viewer.ts'
import { idParam, intParam } from '../batches/params.ts'
import { progressOf } from '../batches/progress.ts'
import { exportResponse } from '../batches/routes.ts'
import type { BatchService } from '../batches/service.ts'
import { toOpenAIBatch } from '../batches/shapes.ts'
import type { BatchRow } from '../batches/types.ts'
import { maskUrl } from '../config/load.ts'
import { familyProvider } from '../config/providers.ts'
import { badRequest, echo, notFound } from '../http/errors.ts'
import { queryTaking, type RouteQuery } from '../http/query.ts'
import type { DashboardServices } from '../services.ts'
import { providerHealth } from './provider-health.ts'
import { providerStats } from './stats.ts'

const HOUR_MS = 3_600_000
const LIST = { dflt: 20, max: 100 }

/**
 * The query each route takes; any other, or one given twice, is a 400 naming it, as on the batch
 * routes these mirror (a second `limit` or `format` was taken as the first without a word).
 */
const TAKES = {
  session: { what: 'the session', names: [] },
  providers: { what: 'the providers view', names: [] },
  deployments: { what: 'the deployments view', names: [] },
  batches: { what: 'listing batches', names: ['limit', 'after'] },
  batch: { what: 'a batch', names: [] },
  export: { what: "a batch's export", names: ['format', 'gzip', 'offset', 'limit'] },
  cancel: { what: 'cancelling a batch', names: [] },
} as const satisfies Record<string, RouteQuery>

function batchView(b: BatchRow, now: number) {
  const p = progressOf(b, now)
  return {
    ...toOpenAIBatch(b),
    family: b.family,
    api_key_id: b.apiKeyId,
    ended_at: b.endedAt === null ? null : Math.floor(b.endedAt / 1000),
    progress: { total: p.total, completed: p.completed, failed: p.failed, done: p.done, fraction: p.fraction, items_per_second: p.itemsPerSecond, eta_seconds: p.etaSeconds, ended: p.ended },
  }
}

export function dashboardDataRoutes(s: DashboardServices, batches: BatchService) {
  const db = s.storage.db
  const batchTable = s.storage.t.batches
  const find = async (v: Viewer, id: string): Promise<BatchRow> => {
    const row = v.admin ? await batches.store.byId(id) : await batches.store.get(v.key.id, id)
    if (!row) throw notFound(`No such batch: ${echo(id)}`)
    return row
  }
  const list = async (v: Viewer, limit: number, after?: string) => {
    const c = after === undefined ? undefined : await find(v, after)
    const cursor = c && or(lt(batchTable.createdAt, c.createdAt), and(eq(batchTable.createdAt, c.createdAt), lt(batchTable.id, c.id)))
    const where = and(v.admin ? undefined : eq(batchTable.apiKeyId, v.key.id), cursor)
    const rows = (await db.select().from(batchTable).where(where).orderBy(desc(batchTable.createdAt), desc(batchTable.id)).limit(limit + 1)) as BatchRow[]
    return { rows: rows.slice(0, limit), hasMore: rows.length > limit }
  }

  return new Elysia({ name: 'dashboard-data' })
    .get('/api/v1/dashboard/session', async ({ request }) => {
      queryTaking(request, TAKES.session)
      const v = viewerOf(request)
      if (v.admin) {
        return { role: 'admin', accounts: s.keys.accounts() }
      }
      const k = s.keys.current(v.key.id) ?? v.key
      return { role: 'key', key: publicKey(k), accounts: [k.account] }
    })
    .get('/api/v1/dashboard/providers', async ({ request }) => {
      queryTaking(request, TAKES.providers)
      const v = viewerOf(request)
      const families: { family: string; served_by: 'upstream' | 'mock'; base_url: string | null }[] = (['openai', 'anthropic'] as const).map((family) => {
        const p = familyProvider(s.config.providers, family)
        // the upstream's address is the operator's business; a key sees only that there is one
        return { family, served_by: p ? 'upstream' : 'mock', base_url: p && v.admin ? maskUrl(p.baseUrl) : null }
      })
      families.push({ family: 'mock-* models', served_by: 'mock', base_url: null })
      await s.recorder.flush()
      const now = Date.now()
      return { window: { from: new Date(now - HOUR_MS).toISOString(), to: new Date(now).toISOString() }, families, stats: await providerStats(s.storage.sql, now - HOUR_MS, v.admin ? undefined : v.key.id) }
    })
    .get('/api/v1/dashboard/deployments', ({ request }) => {
      queryTaking(request, TAKES.deployments)
      const v = viewerOf(request)
      return { at: Math.floor(Date.now() / 1000), ...providerHealth(s.config.providers, s.catalog, s.health, v.admin) }
    })
    .get('/api/v1/dashboard/batches', async ({ request }) => {
      const q = queryTaking(request, TAKES.batches)
      const v = viewerOf(request)
      const limit = intParam(q, 'limit', { min: 1, max: LIST.max, dflt: LIST.dflt })
      const after = idParam(q, 'after')
      if (after !== undefined && !(v.admin ? await batches.store.byId(after) : await batches.store.get(v.key.id, after))) throw badRequest(`after: no batch ${echo(after)}`)
      const page = await list(v, limit, after)
      const now = Date.now()
      return { object: 'list', data: page.rows.map((b) => batchView(b, now)), has_more: page.hasMore }
    })
    .get('/api/v1/dashboard/batches/:id', async ({ request, params }) => (queryTaking(request, TAKES.batch), batchView(await find(viewerOf(request), params.id), Date.now())))
    .get('/api/v1/dashboard/batches/:id/export', async ({ request, params }) => {
      const q = queryTaking(request, TAKES.export)
      return exportResponse(batches.store, await find(viewerOf(request), params.id), q)
    })
    .post('/admin/v1/batches/:id/cancel', async ({ request, params }) => {
      requireAdmin(request, s.config.adminToken)
      queryTaking(request, TAKES.cancel)
      const row = await batches.store.byId(params.id)
      if (!row) throw notFound(`No such batch: ${echo(params.id)}`)
      return batchView(await batches.scheduler.cancel(row), Date.now())
    }, { parse: 'none' })
}
