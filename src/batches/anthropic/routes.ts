// Anthropic's Message Batches on the same engine and records: `/api/beta/v1/messages/batches`
// create `{requests: [{custom_id, params}]}`, list, retrieve, cancel, delete, and the
// results as JSONL at the absolute `results_url` the batch carries once it has ended.
import { Elysia } from 'elysia'
import { keyOf } from '../../http/context.ts'
import { withBodyText } from '../../http/body.ts'
import { badRequest, echo, HttpError } from '../../http/errors.ts'
import { queryTaking, type RouteQuery } from '../../http/query.ts'
import { idParam, intParam } from '../params.ts'
import type { BatchService } from '../service.ts'
import type { Services } from '../../services.ts'
import { pullStream, resultPages, resultsKept } from '../export.ts'
import { messageResultText, toMessageBatch, toMessageBatchList } from './shapes.ts'

export const MESSAGE_BATCHES_ROOT = '/api/beta/v1/messages/batches'
const LIST_LIMIT = { dflt: 20, max: 1000 }

/**
 * The query each route takes, as Anthropic's API names it, and the `beta=true` older SDKs add;
 * any other, or one twice, is a 400 naming it.
 */
const TAKES = {
  list: { what: 'listing message batches', names: ['limit', 'after_id', 'before_id', 'beta'] },
  one: { what: 'a message batch', names: ['beta'] },
} as const satisfies Record<string, RouteQuery>


async function* resultLines(batches: BatchService, id: string): AsyncGenerator<Uint8Array> {
  const enc = new TextEncoder()
  for await (const rows of resultPages(batches.store, id, { from: 0, to: Number.MAX_SAFE_INTEGER })) yield enc.encode(rows.map(messageResultText).join('\n') + '\n')
}

export function messageBatchRoutes(s: Pick<Services, 'config'>, batches: BatchService) {
  const root = MESSAGE_BATCHES_ROOT
  // results_url: under the URL clients reach the gateway by, when it is configured (a proxy that
  // ends TLS would otherwise make it http://), else the request's own origin
  const originOf = (request: Request) => s.config.publicUrl ?? new URL(request.url).origin
  const find = (request: Request, id: string) => (queryTaking(request, TAKES.one), batches.find(keyOf(request).id, id, 'anthropic'))
  return new Elysia({ name: 'batches:anthropic' })
    .post(root, async ({ request }) => toMessageBatch(await withBodyText(request, s.config.limits.maxBodyBytes, (text) => batches.create('anthropic', keyOf(request), text)), originOf(request)), {
      parse: 'none',
    })
    .get(root, async ({ request }) => {
      const q = queryTaking(request, TAKES.list)
      const limit = intParam(q, 'limit', { min: 1, max: LIST_LIMIT.max, dflt: LIST_LIMIT.dflt })
      const after = idParam(q, 'after_id')
      const before = idParam(q, 'before_id')
      if (after !== undefined && before !== undefined) throw badRequest('after_id, before_id: give at most one of them')
      const page = await batches.store.list(keyOf(request).id, { limit, after, before, family: 'anthropic' })
      if (!page) throw badRequest(`${after !== undefined ? 'after_id' : 'before_id'}: no message batch ${echo(after ?? before)}`)
      return toMessageBatchList(page, originOf(request))
    })
    .get(`${root}/:id`, async ({ request, params }) => toMessageBatch(await find(request, params.id), originOf(request)))
    .post(`${root}/:id/cancel`, async ({ request, params }) => (queryTaking(request, TAKES.one), toMessageBatch(await batches.cancel(keyOf(request).id, params.id, 'anthropic'), originOf(request))), { parse: 'none' })
    .get(`${root}/:id/results`, async ({ request, params }) => {
      const b = await find(request, params.id)
      if (b.endedAt === null) throw badRequest(`Message batch ${b.id} has not ended yet; its results are available once processing_status is "ended"`)
      resultsKept(b)
      return new Response(pullStream(resultLines(batches, b.id)), { headers: { 'content-type': 'application/binary' } })
    })
    .delete(`${root}/:id`, async ({ request, params }) => {
      const b = await find(request, params.id)
      if (b.endedAt === null) throw new HttpError(400, `Message batch ${b.id} has not ended; cancel it and wait for it to end before deleting it`)
      await batches.store.delete(b.id)
      return { id: b.id, type: 'message_batch_deleted' as const }
    })
}
