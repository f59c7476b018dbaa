// List query parameters per family: the limits and cursor names differ, the rules do not.
import { badRequest } from '../http/errors.ts'
import { takesOnly } from '../http/query.ts'
import { decodePageToken } from './shapes.ts'
import type { Family, ListQuery } from './types.ts'

const LIMITS: Record<Family, { max: number; default: number }> = {
  openai: { max: 10_000, default: 10_000 },
  anthropic: { max: 1000, default: 20 },
}

function limit(family: Family, raw: string | null): number {
  const { max, default: dflt } = LIMITS[family]
  if (raw === null) return dflt
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN
  if (!Number.isInteger(n) || n < 1 || n > max) throw badRequest(`limit: must be an integer from 1 to ${max}`)
  return n
}

function nonEmpty(name: string, raw: string | null): string | undefined {
  if (raw === null) return undefined
  if (raw === '') throw badRequest(`${name}: must not be empty`)
  return raw
}

/** What OpenAI's files.list sends. */
const OPENAI_LIST = ['limit', 'after', 'order', 'purpose']

export function openAIListQuery(q: URLSearchParams): ListQuery {
  takesOnly(q, 'listing files', OPENAI_LIST)
  const order = q.get('order') ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw badRequest('order: must be "asc" or "desc"')
  return { limit: limit('openai', q.get('limit')), after: nonEmpty('after', q.get('after')), purpose: nonEmpty('purpose', q.get('purpose')), order }
}

export interface AnthropicListQuery extends ListQuery {
  /** Which parameter named the cursor, for the error when it names no file. */
  cursorParam?: 'after_id' | 'before_id' | 'page'
  /** `ids`: only these files, in one page (Anthropic's `files.list({ ids })`). */
  ids?: string[]
  /** `scope_id`: the files of a scope such as a session, which no file of this gateway is in. */
  scoped?: boolean
}

/** Anthropic takes at most this many distinct ids a list. */
const MAX_IDS = 100

/**
 * `ids` as the SDK sends it (`ids[]=a&ids[]=b`) or repeated plainly; de-duplicated. It asks for
 * one page of exactly those files, so a cursor or limit beside it is a 400 naming them.
 */
function idsQuery(q: URLSearchParams): string[] | undefined {
  const given = [...q.getAll('ids[]'), ...q.getAll('ids')]
  if (given.length === 0) return undefined
  if (given.some((id) => id === '')) throw badRequest('ids: must not hold an empty id')
  const ids = [...new Set(given)]
  if (ids.length > MAX_IDS) throw badRequest(`ids: at most ${MAX_IDS} distinct ids, got ${ids.length}`)
  const beside = ['page', 'limit', 'after_id', 'before_id'].filter((p) => q.has(p))
  if (beside.length) throw badRequest(`ids, ${beside.join(', ')}: ids asks for one page of those files; give ${beside.join(' or ')} without it`)
  return ids
}

/** What Anthropic's files.list sends, older SDKs' cursors and `beta=true` included, and `purpose` as on OpenAI's list. */
const ANTHROPIC_LIST = ['limit', 'after_id', 'before_id', 'page', 'ids', 'ids[]', 'scope_id', 'purpose', 'beta']

export function anthropicListQuery(q: URLSearchParams): AnthropicListQuery {
  takesOnly(q, 'listing files', ANTHROPIC_LIST, ['ids', 'ids[]'])
  const ids = idsQuery(q)
  if (ids) return { limit: ids.length, order: 'desc', ids }
  if (nonEmpty('scope_id', q.get('scope_id')) !== undefined) return { limit: 1, order: 'desc', scoped: true }
  let after = nonEmpty('after_id', q.get('after_id'))
  let before = nonEmpty('before_id', q.get('before_id'))
  const page = nonEmpty('page', q.get('page'))
  if (after && before) throw badRequest('after_id, before_id: give at most one of them')
  let cursorParam: AnthropicListQuery['cursorParam'] = after ? 'after_id' : before ? 'before_id' : undefined
  // a page token goes on from where the list it came from was: the Anthropic SDK sends it beside
  // the query it began with (after_id or before_id included), and the token wins
  if (page) {
    const t = decodePageToken(page)
    if (!t) throw badRequest('page: not a page token from a previous list response')
    ;({ after, before } = 'after' in t ? { after: t.after, before: undefined } : { after: undefined, before: t.before })
    cursorParam = 'page'
  }
  return { limit: limit('anthropic', q.get('limit')), after, before, purpose: nonEmpty('purpose', q.get('purpose')), order: 'desc', cursorParam }
}
