// Which surface serves a batch's `endpoint`: one small table. A batch item goes through the
// same SurfaceSpec (checks, IR mapping, codec) as an interactive request to that path.
import { badRequest } from '../http/errors.ts'
import { typeName } from '../routing/router.ts'
import type { SurfaceSpec } from '../pipeline/surface.ts'
import type { ThreadServices } from '../services.ts'
import { chatSurface } from '../surfaces/chat/codec.ts'
import { messagesSurface } from '../surfaces/messages/surface.ts'
import { responsesSurface } from '../surfaces/responses/surface.ts'

type SurfaceOf = (s: ThreadServices) => SurfaceSpec

const ENDPOINTS: Record<string, SurfaceOf | null> = {
  '/v1/chat/completions': () => chatSurface,
  '/v1/messages': () => messagesSurface,
  '/v1/responses': (s) => responsesSurface(s),
}

export const DEFAULT_ENDPOINT = '/v1/chat/completions'
export const ENDPOINT_PATHS = Object.keys(ENDPOINTS)

/** Whether the endpoint is wired to a surface on this build. */
export function endpointAvailable(endpoint: string): boolean {
  return Object.hasOwn(ENDPOINTS, endpoint) && ENDPOINTS[endpoint] !== null
}

/** Surfaces made once per services object (the responses surface holds its threads' store). */
const built = new WeakMap<ThreadServices, Map<string, SurfaceSpec>>()

/** The endpoint if a batch may target it, or a 400 naming `endpoint` and why. */
export function checkEndpoint(endpoint: unknown): string {
  if (typeof endpoint !== 'string' || !Object.hasOwn(ENDPOINTS, endpoint)) {
    const shown = typeof endpoint === 'string' ? `"${endpoint.slice(0, 80)}"` : typeName(endpoint)
    throw badRequest(`endpoint: must be one of ${ENDPOINT_PATHS.map((p) => `"${p}"`).join(', ')}; got ${shown}`)
  }
  if (!ENDPOINTS[endpoint]) throw badRequest(`endpoint: ${endpoint} is not yet available for batches on this gateway`)
  return endpoint
}

/** The surface for a batch endpoint, or a 400 naming `endpoint` and why. */
export function surfaceFor(s: ThreadServices, endpoint: unknown): SurfaceSpec {
  const of = ENDPOINTS[checkEndpoint(endpoint)]!
  let cache = built.get(s)
  if (!cache) built.set(s, (cache = new Map()))
  let spec = cache.get(endpoint as string)
  if (!spec) cache.set(endpoint as string, (spec = of(s)))
  return spec
}
