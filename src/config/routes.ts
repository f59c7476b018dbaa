// Model lists in each family's shape, from the catalog.
import { Elysia } from 'elysia'
import type { CatalogModel } from './catalog.ts'
import type { Services } from '../services.ts'
import { echo, notFound } from '../http/errors.ts'

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
})

export function modelRoutes(s: Pick<Services, 'catalog'>) {
  const find = (id: string) => {
    // the router has decoded the id once (a slash sent as %2F); decoding again would fail on a bare %
    const m = s.catalog.resolve(id)
    if (!m) throw notFound(`Model ${echo(id)} not found`)
    return m
  }
  const openaiList = () => ({ object: 'list', data: s.catalog.list().map(openaiModel) })
  return new Elysia({ name: 'models' })
    .get('/api/v1/models', openaiList)
    .get('/api/alpha/v1/models', openaiList)
    .get('/api/v1/models/:id', ({ params }) => openaiModel(find(params.id)))
    .get('/api/alpha/v1/models/:id', ({ params }) => openaiModel(find(params.id)))
    .get('/api/beta/v1/models', () => {
      const data = s.catalog.list().map(anthropicModel)
      return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }
    })
    .get('/api/beta/v1/models/:id', ({ params }) => anthropicModel(find(params.id)))
}
