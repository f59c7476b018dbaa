// The OpenAI-shaped batch routes, under `/api/v1/batches` and `/api/alpha/v1/batches`:
// create, list, retrieve, cancel, results (paged by item index) and export. Every route acts for the
// calling key only; another key's batch is not found.
import { Elysia } from 'elysia'
import { keyOf } from '../http/context.ts'
import { withBodyText } from '../http/body.ts'
import { badRequest, echo, notFound } from '../http/errors.ts'
import { queryTaking, type RouteQuery } from '../http/query.ts'
import { contentDisposition } from '../files/shapes.ts'
import type { Services } from '../services.ts'
import { gzipped, ndjson, pullStream, resultsKept, zipExport } from './export.ts'
import { boolParam, enumParam, idParam, intParam } from './params.ts'
import type { BatchService } from './service.ts'
import type { BatchStore } from './store.ts'
import type { BatchRow } from './types.ts'
import { resultsPage } from './results-page.ts'
import { toOpenAIBatch, toOpenAIList } from './shapes.ts'

export const BATCH_ROOTS = ['/api/v1/batches', '/api/alpha/v1/batches'] as const

/** Results page size: 100 by default, 1000 at most. */
export const RESULTS_LIMIT = { dflt: 100, max: 1000 }
const LIST_LIMIT = { dflt: 20, max: 100 }

/** The query each route takes, as OpenAI's Batch API and the spec name it; any other, or one twice, is a 400 naming it. */
const TAKES = {
  list: { what: 'listing batches', names: ['limit', 'after'] },
  one: { what: 'retrieving a batch', names: [] },
  cancel: { what: 'cancelling a batch', names: [] },
  results: { what: "a batch's results", names: ['offset', 'limit'] },
  export: { what: "a batch's export", names: ['format', 'gzip', 'offset', 'limit'] },
} as const satisfies Record<string, RouteQuery>

/** A batch deleted while its results page was read (a step at a time): not found, as it is now. */
const gone = (id: string): never => {
  throw notFound(`No such batch: ${echo(id)}`)
}

function rootRoutes(root: string, batches: BatchService, maxBodyBytes: number) {
  const find = (request: Request, id: string) => batches.find(keyOf(request).id, id)
  return new Elysia({ name: `batches:${root}` })
    .post(root, async ({ request }) => toOpenAIBatch(await withBodyText(request, maxBodyBytes, (text) => batches.create('openai', keyOf(request), text))), { parse: 'none' })
    .get(root, async ({ request }) => {
      const q = queryTaking(request, TAKES.list)
      const limit = intParam(q, 'limit', { min: 1, max: LIST_LIMIT.max, dflt: LIST_LIMIT.dflt })
      const after = idParam(q, 'after')
      // the OpenAI SDK's root lists OpenAI-shaped batches only: a message batch there has no
      // input file and no output file, which its client would go looking for (the unified root lists both)
      const page = await batches.store.list(keyOf(request).id, { limit, after, family: root.startsWith('/api/alpha/') ? 'openai' : undefined })
      if (!page) throw badRequest(`after: no batch ${echo(after)}`)
      return toOpenAIList(page)
    })
    .get(`${root}/:id`, async ({ request, params }) => (queryTaking(request, TAKES.one), toOpenAIBatch(await find(request, params.id))))
    .post(`${root}/:id/cancel`, async ({ request, params }) => (queryTaking(request, TAKES.cancel), toOpenAIBatch(await batches.cancel(keyOf(request).id, params.id))), { parse: 'none' })
    .get(`${root}/:id/results`, async ({ request, params }) => {
      const q = queryTaking(request, TAKES.results)
      const b = resultsKept(await find(request, params.id))
      const offset = intParam(q, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, dflt: 0 })
      const limit = intParam(q, 'limit', { min: 1, max: RESULTS_LIMIT.max, dflt: RESULTS_LIMIT.dflt })
      const text = await resultsPage(batches.store, b, offset, limit)
      // the retention may have begun removing them while they were read, or the batch been
      // deleted (its row first, then its items): never a page short of them
      resultsKept((await batches.store.byId(b.id)) ?? gone(b.id))
      return new Response(text, { headers: { 'content-type': 'application/json' } })
    })
    .get(`${root}/:id/export`, async ({ request, params }) => {
      const q = queryTaking(request, TAKES.export)
      return exportResponse(batches.store, await find(request, params.id), q)
    })
}

/** A batch's results as a download (export query: format, gzip, offset, limit). */
export function exportResponse(store: BatchStore, b: BatchRow, q: URLSearchParams): Response {
  resultsKept(b)
  const format = enumParam(q, 'format', ['ndjson', 'zip'] as const, 'ndjson')
  const gzip = boolParam(q, 'gzip')
  if (gzip && format === 'zip') throw badRequest('gzip: applies to format=ndjson only (a ZIP is compressed already)')
  const offset = intParam(q, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, dflt: 0 })
  const limit = intParam(q, 'limit', { min: 1, max: Number.MAX_SAFE_INTEGER, dflt: Number.MAX_SAFE_INTEGER })
  const range = { from: offset, to: Math.min(Number.MAX_SAFE_INTEGER, offset + limit) }
  const [body, type, ext] =
    format === 'zip'
      ? [zipExport(store, b, range, toOpenAIBatch(b)), 'application/zip', 'zip']
      : gzip
        ? [gzipped(ndjson(store, b, range)), 'application/gzip', 'jsonl.gz']
        : [ndjson(store, b, range), 'application/x-ndjson', 'jsonl']
  // the batch's status as the export began: a running batch's holds the items ended so far
  // (the ZIP's batch.json says so too). The items' prompts and replies: no cache, a browser's
  // included, keeps a copy after the download
  const headers = { 'content-type': type, 'content-disposition': contentDisposition(`${b.id}_results.${ext}`), 'x-switchyard-batch-status': b.status, 'cache-control': 'no-store' }
  return new Response(pullStream(body), { headers })
}

export function batchRoutes(s: Pick<Services, 'config'>, batches: BatchService) {
  const app = new Elysia({ name: 'batches' })
  for (const root of BATCH_ROOTS) app.use(rootRoutes(root, batches, s.config.limits.maxBodyBytes))
  return app
}
