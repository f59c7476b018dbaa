// Model lists in each family's shape, from the catalog.
import { Elysia } from 'elysia'
import type { CatalogModel } from './catalog.ts'
import type { Services } from '../services.ts'
import { badRequest, echo, notFound } from '../http/errors.ts'

// Beside each family's own fields: the context window and the output cap the gateway checks
// requests against. A cap of null is one the gateway does not know (a model known only from
// the price library): requests are not checked against it, the upstream (or the mock) decides.
const openaiModel = (m: CatalogModel) => ({
  id: m.id,
  object: 'model',
  created: m.created,
  owned_by: m.family === 'openai' ? 'openai' : 'anthropic',
  context_window: m.unlisted ? null : m.contextWindow,
  max_output_tokens: m.maxOutputTokens ?? null,
})

const anthropicModel = (m: CatalogModel) => ({
  type: 'model',
  id: m.id,
  display_name: m.id,
  created_at: new Date(m.created * 1000).toISOString(),
  max_input_tokens: m.unlisted ? null : m.contextWindow,
  max_tokens: m.maxOutputTokens ?? null,
  // a model the gateway serves is callable: active, with no deprecation or retirement dated;
  // capabilities and line are what the gateway does not know (null, as Anthropic allows)
  lifecycle: 'active' as const,
  deprecated_at: null,
  retires_at: null,
  capabilities: null,
  line: null,
  // the beta model's fallbacks it takes: not said here (null; an empty list would say none)
  allowed_fallback_models: null,
})

const STAGES = ['active', 'deprecated', 'retired']

/**
 * Anthropic's `lifecycle` filter (`lifecycle[]=…`, up to 3 stages): whether the gateway's
 * models, all active, are listed at all.
 */
function activeListed(q: URLSearchParams): boolean {
  const asked = [...q.getAll('lifecycle[]'), ...q.getAll('lifecycle')]
  if (asked.length === 0) return true
  const bad = asked.find((v) => !STAGES.includes(v))
  if (bad !== undefined) throw badRequest(`lifecycle: expected ${STAGES.join(', ')}, got ${echo(bad)}`)
  if (asked.length > STAGES.length) throw badRequest(`lifecycle: at most ${STAGES.length} values`)
  return asked.includes('active')
}

/** Anthropic pages its model list: `limit` (1–1000, default 20), then `after_id` or `before_id`. */
function anthropicPage(all: ReturnType<typeof anthropicModel>[], q: URLSearchParams) {
  const listed = activeListed(q)
  const lq = q.get('limit')
  // digits only, as the other lists take it: Number() reads 1e3, 0x10 and " 5" as integers
  const limit = lq === null ? 20 : /^\d+$/.test(lq) ? Number(lq) : NaN
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badRequest(`limit: expected an integer 1-1000, got ${echo(lq ?? '')}`)
  const after = q.get('after_id')
  const before = q.get('before_id')
  if (after !== null && before !== null) throw badRequest('after_id, before_id: give one of them, not both')
  const at = (id: string, field: string) => {
    const i = all.findIndex((m) => m.id === id)
    if (i < 0) throw badRequest(`${field}: no model ${echo(id)} in the list`)
    return i
  }
  let start = 0
  let end = all.length
  if (after !== null) start = at(after, 'after_id') + 1
  if (before !== null) end = at(before, 'before_id')
  if (!listed) return { data: [], has_more: false, first_id: null, last_id: null }
  const data = before !== null ? all.slice(Math.max(0, end - limit), end) : all.slice(start, start + limit)
  const has_more = before !== null ? end - limit > 0 : start + limit < all.length
  return { data, has_more, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }
}

export function modelRoutes(s: Pick<Services, 'catalog'>) {
  const find = (id: string) => {
    // the router has decoded the id once (a slash sent as %2F); decoding again would fail on a bare %
    const m = s.catalog.resolve(id)
    if (!m) throw notFound(`Model ${echo(id)} not found`)
    return m
  }
  // OpenAI's snapshots are models of their own: a dated id (the one its requests go upstream as) is retrieved under it
  const openaiOne = (id: string) => {
    const m = find(id)
    return openaiModel(m.upstreamId === id ? { ...m, id } : m)
  }
  const openaiList = () => ({ object: 'list', data: s.catalog.list().map(openaiModel) })
  return new Elysia({ name: 'models' })
    .get('/api/v1/models', openaiList)
    .get('/api/alpha/v1/models', openaiList)
    .get('/api/v1/models/:id', ({ params }) => openaiOne(params.id))
    .get('/api/alpha/v1/models/:id', ({ params }) => openaiOne(params.id))
    .get('/api/beta/v1/models', ({ request }) => anthropicPage(s.catalog.list().map(anthropicModel), new URL(request.url).searchParams))
    .get('/api/beta/v1/models/:id', ({ params }) => anthropicModel(find(params.id)))
}
