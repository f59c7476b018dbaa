// Value sets the provider owns and grows: display modes, effort levels, service tiers,
// verbosity, cache retention. The gateway must not freeze them. On a model of the surface's
// own family the value goes upstream as it is (the upstream is the authority, and its 400
// comes back unchanged; the mock ignores what it does not model). Only where the gateway
// translates the request to the other family does it need to know the value, and there an
// unknown one is a 400 naming the field and the value.
//
// Each surface's schema takes any string for these fields; this table is the one place that
// lists them, with the values the translation knows.
import type { CatalogModel, Surface } from '../config/catalog.ts'
import { badRequest, echo } from '../http/errors.ts'
import type { Family } from '../ir/types.ts'

/** The family whose API each surface speaks. */
export const SURFACE_FAMILY: Record<Surface, Family> = { chat: 'openai', responses: 'openai', messages: 'anthropic' }

const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh']
const CLAUDE_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max']
const OPENAI_TIERS = ['auto', 'default', 'flex', 'scale', 'priority']
const VERBOSITY = ['low', 'medium', 'high']

/** Per surface: field path (dots into objects) → the values a translation knows. */
export const OWNED_VALUES: Record<Surface, Record<string, readonly string[]>> = {
  chat: {
    reasoning_effort: EFFORTS,
    service_tier: OPENAI_TIERS,
    verbosity: VERBOSITY,
    prompt_cache_retention: ['in-memory', '24h'],
  },
  responses: {
    reasoning_effort: EFFORTS,
    'reasoning.effort': EFFORTS,
    'text.verbosity': VERBOSITY,
    verbosity: VERBOSITY,
    service_tier: OPENAI_TIERS,
    prompt_cache_retention: ['in-memory', '24h'],
  },
  messages: {
    'thinking.display': ['summarized', 'omitted'],
    'output_config.effort': CLAUDE_EFFORTS,
  },
}

function at(body: Record<string, unknown>, path: string): unknown {
  let v: unknown = body
  for (const k of path.split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, k)) return undefined
    v = (v as Record<string, unknown>)[k]
  }
  return v
}

/**
 * Checks the owned fields of a body whose model is known: any string on the surface's own
 * family; a value the translation knows otherwise.
 */
export function checkOwnedValues(surface: Surface, body: Record<string, unknown>, model: CatalogModel): void {
  if (model.family === SURFACE_FAMILY[surface]) return
  const fields = OWNED_VALUES[surface]
  for (const path in fields) {
    const v = at(body, path)
    if (typeof v !== 'string') continue
    const known = fields[path]!
    if (!known.includes(v)) {
      throw badRequest(`${path}: "${echo(v)}" cannot be translated for ${model.id} (a ${model.family === 'anthropic' ? 'Claude' : 'GPT'}-family model); known values: ${known.map((k) => `"${k}"`).join(', ')}`)
    }
  }
}
