// POST /api/beta/v1/messages (and the unified /api/v1/messages): the messages codec on the
// shared generation pipeline; and messages/count_tokens, which Claude Code calls in bursts.
// Headers: `anthropic-version` / `beta-version` (any date, not checked), and
// `anthropic-beta` / `beta-beta` lists (bounded: betas.ts), forwarded upstream as `anthropic-beta`.
import { Elysia } from 'elysia'
import { badRequest } from '../../http/errors.ts'
import { readJsonBody } from '../../http/body.ts'
import { generate } from '../../pipeline/generate.ts'
import { contextOf } from '../../pipeline/http.ts'
import type { GenerationServices } from '../../services.ts'
import type { Handler } from '../../http/direct.ts'
import { betasFault, headerBetas } from './betas.ts'
import { countMessageTokens } from './count.ts'
import { messagesSurface } from './surface.ts'

export const MESSAGES_PATHS = ['/api/beta/v1/messages', '/api/v1/messages'] as const
const VERSION = /^\d{4}-\d{2}-\d{2}$/

/** The beta tokens of a request's headers (both spellings), or a 400 naming a bad version header. */
export function messagesHeaders(h: Headers): { betas: string[] } {
  for (const name of ['anthropic-version', 'beta-version']) {
    const v = h.get(name)
    if (v !== null && !VERSION.test(v.trim())) throw badRequest(`${name}: expected a date such as 2023-06-01, got "${v.slice(0, 40)}"`)
  }
  const betas: string[] = []
  for (const name of ['anthropic-beta', 'beta-beta']) {
    const read = headerBetas(h.get(name) ?? '')
    if ('fault' in read) throw badRequest(`${name}: ${read.fault}`)
    betas.push(...read.tokens)
  }
  const all = [...new Set(betas)]
  const fault = betasFault(all)
  if (fault) throw badRequest(`anthropic-beta: ${fault} (both headers together)`)
  return { betas: all }
}

export function messagesHandler(s: GenerationServices): Handler {
  return async (request) => {
    const { betas } = messagesHeaders(request.headers)
    const raw = await readJsonBody(request, s.config.limits.maxBodyBytes)
    return generate(s, messagesSurface, raw, contextOf(request, { betas }))
  }
}

export function messagesRoutes(s: GenerationServices, handle = messagesHandler(s)) {
  const app = new Elysia({ name: 'messages' })
  for (const path of MESSAGES_PATHS) {
    app.post(path, ({ request }) => handle(request))
    app.post(`${path}/count_tokens`, async ({ request }) => {
      const { betas } = messagesHeaders(request.headers)
      const raw = await readJsonBody(request, s.config.limits.maxBodyBytes)
      return { input_tokens: await countMessageTokens(s, raw, contextOf(request, { betas })) }
    })
  }
  return app
}
