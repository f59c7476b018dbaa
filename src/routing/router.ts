// Where a request goes: the catalog entry of its model (on a surface that may serve it); the
// adapters that serve it are the registry's (providers/registry.ts), one per deployment's
// provider. What each parameter becomes per family is in the surfaces' parameter tables (params.ts).
import type { Catalog, CatalogModel, Surface } from '../config/catalog.ts'
import { badRequest } from '../http/errors.ts'

const SURFACE_PATHS: Record<Surface, string> = {
  chat: 'POST /api/alpha/v1/chat/completions',
  responses: 'POST /api/alpha/v1/responses',
  messages: 'POST /api/beta/v1/messages',
}

/** The catalog entry for `model` on a surface, or a 400 that names `model` and says why. */
export function resolveModel(catalog: Catalog, id: unknown, surface: Surface): CatalogModel {
  if (id === undefined || id === null) throw badRequest('model: required')
  if (typeof id !== 'string') throw badRequest(`model: expected a string, got ${typeName(id)}`)
  if (id.length === 0) throw badRequest('model: must not be empty')
  const model = catalog.resolve(id)
  if (!model) throw badRequest(`model: unknown model "${clip(id)}"; GET /api/v1/models lists the models this gateway serves`)
  if (!model.surfaces.includes(surface)) {
    const where = model.surfaces.map((x) => `${x} (${SURFACE_PATHS[x]})`).join(', ')
    throw badRequest(`model: ${model.id} is not served on the ${surface} surface; use ${where}`)
  }
  return model
}

export function typeName(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  const t = typeof v
  return t === 'object' ? 'an object' : t === 'string' ? 'a string' : t === 'number' ? 'a number' : t === 'boolean' ? 'a boolean' : t
}

function clip(s: string): string {
  return s.length > 80 ? s.slice(0, 80) + '…' : s
}
