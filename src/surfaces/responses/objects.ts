// The stored response objects of the responses surface, as OpenAI's API has them: retrieve,
// its input items (paged), delete, and cancel. Only the key that stored a response sees it;
// any other key gets the 404 of an id that does not exist.
import { Elysia } from 'elysia'
import { keyOf } from '../../http/context.ts'
import { badRequest, echo, HttpError, notFound } from '../../http/errors.ts'
import { eachOnce, onlyKnownParams } from '../../http/query.ts'
import type { Item } from './items.ts'
import { shownItem } from './held-search.ts'
import { asListed, idPrefixOf } from './listed.ts'
import type { ThreadStore } from './thread.ts'

const PREFIXES = ['/api/alpha/v1', '/api/v1'] as const
const LIMIT = { dflt: 20, min: 1, max: 100 }

type Obj = Record<string, unknown>

const missing = (id: string) => notFound(`No response found with id "${echo(id)}"`)

/** An item's id in the listing: its own, or a stable one (its type's prefix) for a stored item the client sent without one. */
function itemId(it: Item, responseId: string, i: number): string {
  const o = it as Obj
  if (typeof o.id === 'string') return o.id
  return `${idPrefixOf(o.type ?? 'message')}_${responseId.replace(/^resp_/, '')}_${i}`
}

/** An item as the listing shows it: with its id, in its listed form (listed.ts). */
const listed = (it: Item, responseId: string, i: number): Obj => ({ ...asListed(shownItem(it as Obj)), id: itemId(it, responseId, i) })

function listQuery(q: URLSearchParams) {
  onlyKnownParams(q, LIST_QUERY, 'input_items takes limit, after, before, order, include')
  eachOnce(q, INCLUDES)
  const raw = q.get('limit')
  const limit = raw === null ? LIMIT.dflt : /^\d+$/.test(raw) ? Number(raw) : NaN
  if (!Number.isInteger(limit) || limit < LIMIT.min || limit > LIMIT.max) throw badRequest(`limit: must be an integer from ${LIMIT.min} to ${LIMIT.max}`)
  const order = q.get('order') ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw badRequest('order: must be "asc" or "desc"')
  return { limit, order, after: q.get('after') ?? undefined, before: q.get('before') ?? undefined }
}

/** `include` is a list (the SDK sends `include[]=a&include[]=b`); every other parameter is read once, so a repeat is a 400. */
const INCLUDES = ['include', 'include[]']
const LIST_QUERY: ReadonlySet<string> = new Set(['limit', 'after', 'before', 'order', ...INCLUDES])
const RETRIEVE_QUERY: ReadonlySet<string> = new Set(['include', 'include[]', 'include_obfuscation', 'stream', 'starting_after'])

/**
 * A retrieve's query: OpenAI's parameters. `stream=true` replays a background response's events
 * as it runs; here every response is answered in the foreground and stored complete, so there
 * is nothing to replay: a 400 saying so, not the object where a client waits for events.
 */
function retrieveQuery(q: URLSearchParams): void {
  onlyKnownParams(q, RETRIEVE_QUERY, `retrieving a response takes ${[...RETRIEVE_QUERY].filter((n) => !n.endsWith('[]')).join(', ')}`)
  eachOnce(q, INCLUDES)
  const stream = q.get('stream')
  if (stream === null || stream === 'false') return
  if (stream !== 'true') throw badRequest('stream: must be true or false')
  throw badRequest('stream: a stored response is retrieved whole here: the gateway answers every response (background ones too) in the foreground, so it is complete when stored; retrieve it without stream')
}

export function responseObjectRoutes(threads: ThreadStore) {
  const app = new Elysia({ name: 'responses-objects' })
  for (const prefix of PREFIXES) {
    app
      // OpenAI's standalone compaction, not offered here: said so, rather than a 405 for an id "compact"
      .post(`${prefix}/responses/compact`, () => {
        throw new HttpError(404, 'POST /responses/compact (standalone compaction) is not offered by this gateway: send context_management: [{ type: "compaction", compact_threshold }] with a responses request instead (a GPT model\'s upstream compacts; for a Claude model it is left out and named in x-switchyard-compat)')
      })
      .get(`${prefix}/responses/:id`, async ({ request, params }) => {
        retrieveQuery(new URL(request.url).searchParams)
        const r = await threads.retrieve(keyOf(request).id, params.id)
        if (!r) throw missing(params.id)
        return r
      })
      .get(`${prefix}/responses/:id/input_items`, async ({ request, params }) => {
        const q = listQuery(new URL(request.url).searchParams)
        const items = await threads.inputItems(keyOf(request).id, params.id)
        if (!items) throw missing(params.id)
        // positions in the listing's order; only the page's items are built (a turn may hold 80,000)
        const n = items.length
        const indexAt = (k: number) => (q.order === 'desc' ? n - 1 - k : k)
        const find = (id: string) => {
          for (let k = 0; k < n; k++) if (itemId(items[indexAt(k)]!, params.id, indexAt(k)) === id) return k
          return -1
        }
        let from = 0
        if (q.after !== undefined) {
          const at = find(q.after)
          if (at < 0) throw badRequest(`after: no input item "${echo(q.after)}" in response "${echo(params.id)}"`)
          from = at + 1
        }
        let to = n
        if (q.before !== undefined) {
          const at = find(q.before)
          if (at < 0) throw badRequest(`before: no input item "${echo(q.before)}" in response "${echo(params.id)}"`)
          to = at
        }
        const page: Obj[] = []
        for (let k = from; k < Math.min(to, from + q.limit); k++) page.push(listed(items[indexAt(k)]!, params.id, indexAt(k)))
        return { object: 'list', data: page, first_id: (page[0]?.id as string | undefined) ?? null, last_id: (page.at(-1)?.id as string | undefined) ?? null, has_more: from + page.length < to }
      })
      .delete(`${prefix}/responses/:id`, async ({ request, params }) => {
        if (!(await threads.delete(keyOf(request).id, params.id))) throw missing(params.id)
        return { id: params.id, object: 'response', deleted: true }
      })
      .post(`${prefix}/responses/:id/cancel`, async ({ request, params }) => {
        const r = await threads.retrieve(keyOf(request).id, params.id)
        if (!r) throw missing(params.id)
        throw badRequest(`Only responses created with background: true can be cancelled; "${echo(params.id)}" is ${typeof r.status === 'string' ? r.status : 'finished'} (this gateway answers every response in the foreground)`)
      })
  }
  return app
}
