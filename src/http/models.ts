// Model lists in each family's shape, from the catalog.
import { Elysia } from 'elysia'
import type { CatalogModel } from '../config/catalog.ts'
import type { Services } from '../services.ts'
import { notFound } from './errors.ts'

const openaiModel = (m: CatalogModel) => ({ id: m.id, object: 'model', created: m.created, owned_by: m.family === 'openai' ? 'openai' : 'anthropic' })

const anthropicModel = (m: CatalogModel) => ({
  type: 'model',
  id: m.id,
  display_name: m.id,
  created_at: new Date(m.created * 1000).toISOString(),
})

export function modelRoutes(s: Services) {
  const find = (id: string) => {
    const m = s.catalog.resolve(decodeURIComponent(id))
    if (!m) throw notFound(`Model ${id} not found`)
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
