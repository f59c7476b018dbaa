// Generation lookup (by the id a reply carried, or the gateway's own) and the paged listing beside it. Only the key that made a
// generation can read it; the admin token (dashboard) reads every key's. `id` is either the
// id the client saw in the reply or the gateway's own `gen-…` id; a reply id that an upstream
// reused for several of this key's requests finds the latest.
import { Elysia } from 'elysia'
import { viewerOf, type Viewer } from '../auth/viewer.ts'
import { intParam } from '../batches/params.ts'
import { echo, HttpError } from '../http/errors.ts'
import { eachOnce, onlyKnownParams, takesOnly } from '../http/query.ts'
import type { Services } from '../services.ts'
import { ENDPOINTS, GenerationList, STATUSES, type ListFilter } from './list.ts'
import { toWire } from './row.ts'
import type { Endpoint } from './types.ts'

/** Ids are echoed in 404 messages; a hostile one is cut short. */
const ECHO_MAX = 200

export const LIST_LIMIT = { dflt: 50, max: 200 }

/** Query parameters a listing takes; any other is a 400 naming it (a typo must not list everything). */
const LIST_PARAMS = new Set(['limit', 'after', 'model', 'status', 'endpoint', 'key', 'account'])

function text(q: URLSearchParams, name: string): string | undefined {
  const v = q.get(name)
  if (v === null) return undefined
  if (v.trim() === '') throw new HttpError(400, `${name}: must not be empty`)
  return v
}

function oneOf<T extends string>(q: URLSearchParams, name: string, values: readonly T[]): T | undefined {
  const v = text(q, name)
  if (v !== undefined && !(values as readonly string[]).includes(v)) throw new HttpError(400, `${name}: must be one of ${values.join(', ')}, got "${echo(v)}"`)
  return v as T | undefined
}

export function generationRoutes(s: Pick<Services, 'catalog' | 'recorder' | 'storage'>) {
  const list = new GenerationList(s.storage.sql)
  const canonical = (id: string) => s.catalog.list().find((c) => c.id === id || c.aliases.includes(id))?.id ?? id

  async function listing(q: URLSearchParams, v: Viewer) {
    onlyKnownParams(q, LIST_PARAMS, `the listing takes ${[...LIST_PARAMS].join(', ')} (or id alone for one record)`)
    // one value each, as the usage report takes them: a second one was ignored without a word
    eachOnce(q)
    const key = text(q, 'key')
    const account = text(q, 'account')
    // a key asking for another key's or account's records finds nothing to list, as for a missing one
    if (!v.admin && key !== undefined && key !== v.key.id) throw new HttpError(404, `No such key: ${echo(key)}`)
    if (!v.admin && account !== undefined && account !== v.key.account) throw new HttpError(404, `No such account: ${echo(account)}`)
    const model = text(q, 'model')
    const f: ListFilter = {
      keyId: v.admin ? key : v.key.id,
      account: v.admin ? account : undefined,
      model: model === undefined ? undefined : canonical(model),
      endpoint: oneOf<Endpoint>(q, 'endpoint', ENDPOINTS),
      status: oneOf(q, 'status', STATUSES),
      limit: intParam(q, 'limit', { min: 1, max: LIST_LIMIT.max, dflt: LIST_LIMIT.dflt }),
    }
    const after = text(q, 'after')
    if (after !== undefined) {
      f.after = await list.cursor(after, v.admin ? undefined : v.key.id)
      if (!f.after) throw new HttpError(400, `after: no generation ${echo(after)} (pass the gateway_id of the last record of the previous page)`)
    }
    // a stream that just ended early is still being billed, as for a lookup by id
    await s.recorder.settled(undefined, v.admin ? undefined : { keyId: v.key.id })
    await s.recorder.flush()
    const page = await list.page(f)
    const data = page.rows.map((r) => ({ ...toWire(r), api_key_id: r.apiKeyId, account: r.account, http_status: r.httpStatus }))
    // last_id is where the next page starts: after a partial page, the last record it read
    return { object: 'list', data, first_id: page.rows[0]?.id ?? null, last_id: page.next, has_more: page.hasMore, partial: page.partial }
  }

  return new Elysia({ name: 'generations' })
    .get('/api/v1/generations', async ({ request }) => {
      const q = new URL(request.url).searchParams
      const v = viewerOf(request)
      const id = q.get('id')
      if (id === null) return listing(q, v)
      // a lookup is of one record: a filter beside it, or a second id, would be ignored
      takesOnly(q, 'a lookup by id', ['id'])
      if (id === '') throw new HttpError(400, 'id: must not be empty (the generation id; leave it out to list records)')
      // a stream that just ended early is still being billed: its record is a few ms away
      const owner = v.admin ? undefined : v.key.id
      await s.recorder.settled(undefined, owner === undefined ? undefined : { keyId: owner })
      const row = await s.recorder.get(id, owner)
      // another key's record is reported exactly like a missing one, so ids cannot be probed
      if (!row || (owner !== undefined && row.apiKeyId !== owner)) throw new HttpError(404, `generation not found: ${id.slice(0, ECHO_MAX)}`)
      return { success: true, generation: toWire(row) }
    })
    .get('/api/v1/generation', ({ request }) => {
      const search = new URL(request.url).search
      return new Response(null, { status: 307, headers: { location: `/api/v1/generations${search}` } })
    })
}
