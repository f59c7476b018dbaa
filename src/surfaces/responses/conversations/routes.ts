// OpenAI's Conversations API under the responses surface's roots (`/api/alpha/v1` and the unified
// `/api/v1`): a conversation (create, retrieve, update its metadata, delete) and its items (list,
// add, retrieve, delete). Only the key that made a conversation sees it: for any other every
// route is the 404 of an id that does not exist.
import { Elysia } from 'elysia'
import { readJsonBody } from '../../../http/body.ts'
import { keyOf } from '../../../http/context.ts'
import { badRequest, echo, HttpError, notFound } from '../../../http/errors.ts'
import type { ThreadServices } from '../../../services.ts'
import { createBody, includeOnly, itemsBody, listQuery, updateBody } from './params.ts'
import { conversationStoreOf, shownKept, type Conversation } from './store.ts'
import type { ThreadStore } from '../thread.ts'
import { checkAddedItems } from '../validate.ts'
import type { Item } from '../items.ts'
import { asListed } from '../listed.ts'

const PREFIXES = ['/api/alpha/v1', '/api/v1'] as const

const missing = (id: string) => notFound(`Conversation with id '${echo(id)}' not found.`)
const missingItem = (id: string, conversation: string) => notFound(`Item with id '${echo(id)}' not found in conversation '${echo(conversation)}'.`)

/** A body that may be left out (the openai SDK's `conversations.create()` sends none): `{}` then. */
async function optionalBody(request: Request, limit: number): Promise<unknown> {
  try {
    return await readJsonBody(request, limit)
  } catch (e) {
    if (e instanceof HttpError && e.status === 400 && e.message.startsWith('Request body is empty')) return {}
    throw e
  }
}

const query = (request: Request) => new URL(request.url).searchParams

export function conversationRoutes(s: ThreadServices, threads: ThreadStore) {
  const store = conversationStoreOf(s)
  const maxBody = s.config.limits.maxBodyBytes
  /** Items the key adds, their references checked (and its own replies' resolved) as a turn's input's are. */
  const checked = async (request: Request, items: Item[]): Promise<Item[]> => {
    await checkAddedItems(items, { apiKeyId: keyOf(request).id, threads })
    return items
  }
  /** The key's conversation, or its 404. */
  const owned = async (request: Request, id: string): Promise<Conversation> => {
    const conv = await store.get(keyOf(request).id, id)
    if (!conv) throw missing(id)
    return conv
  }
  const app = new Elysia({ name: 'conversations' })
  for (const prefix of PREFIXES) {
    const root = `${prefix}/conversations`
    app
      .post(root, async ({ request }) => {
        const { items, metadata } = createBody(await optionalBody(request, maxBody))
        return store.create(keyOf(request).id, metadata, await checked(request, items))
      })
      .get(`${root}/:id`, ({ request, params }) => owned(request, params.id))
      .post(`${root}/:id`, async ({ request, params }) => {
        await owned(request, params.id)
        const conv = await store.setMetadata(keyOf(request).id, params.id, updateBody(await readJsonBody(request, maxBody)))
        if (!conv) throw missing(params.id)
        return conv
      })
      .delete(`${root}/:id`, async ({ request, params }) => {
        if (!(await store.delete(keyOf(request).id, params.id))) throw missing(params.id)
        return { id: params.id, object: 'conversation.deleted', deleted: true }
      })
      .get(`${root}/:id/items`, async ({ request, params }) => {
        const q = listQuery(query(request))
        await owned(request, params.id)
        const page = await store.page(params.id, q)
        if (!page) throw badRequest(`after: no item "${echo(q.after)}" in conversation "${echo(params.id)}"`)
        const ids = page.data.map((it) => it.id as string)
        return { object: 'list', data: page.data.map(asListed), first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null, has_more: page.hasMore }
      })
      .post(`${root}/:id/items`, async ({ request, params }) => {
        includeOnly(query(request))
        await owned(request, params.id)
        const data = await store.append(params.id, await checked(request, itemsBody(await readJsonBody(request, maxBody))))
        // deleted since it was found: its 404, not a 200 listing none of the items sent
        if (!data) throw missing(params.id)
        const ids = data.map((it) => it.id as string)
        return { object: 'list', data: data.map((it) => asListed(shownKept(it))), first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null, has_more: false }
      })
      .get(`${root}/:id/items/:item`, async ({ request, params }) => {
        includeOnly(query(request))
        await owned(request, params.id)
        const item = await store.item(params.id, params.item)
        if (!item) throw missingItem(params.item, params.id)
        return asListed(item)
      })
      .delete(`${root}/:id/items/:item`, async ({ request, params }) => {
        const conv = await owned(request, params.id)
        if (!(await store.deleteItem(params.id, params.item))) throw missingItem(params.item, params.id)
        return conv
      })
  }
  return app
}
