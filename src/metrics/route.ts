// GET /metrics: the admin token as a Bearer (Prometheus's `authorization` scrape setting), or
// no token at all with `metrics.public: true` (a port on a private network). Without either
// it answers as the admin routes do: 404 with no admin token configured, 401 without the token.
import { Elysia } from 'elysia'
import { requireAdmin } from '../auth/viewer.ts'
import type { Config } from '../config/load.ts'
import { HttpError } from '../http/errors.ts'
import { CONTENT_TYPE, formatFor } from './exposition.ts'
import type { GatewayMetrics } from './gateway.ts'

export function metricsRoutes(s: { config: Pick<Config, 'adminToken' | 'metrics'>; metrics?: GatewayMetrics }) {
  return new Elysia({ name: 'metrics' }).get('/metrics', async ({ request }) => {
    if (!s.config.metrics.public) requireAdmin(request, s.config.adminToken)
    if (!s.metrics) throw new HttpError(404, 'No route GET /metrics')
    const format = formatFor(request.headers.get('accept'))
    return new Response(await s.metrics.scrape(format), { headers: { 'content-type': CONTENT_TYPE[format], 'cache-control': 'no-store' } })
  })
}
