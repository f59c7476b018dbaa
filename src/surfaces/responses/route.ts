// POST /api/alpha/v1/responses : the responses codec on
// the shared generation pipeline. Streams whenever the body says `stream: true`, whatever
// the Accept header says (the openai SDK sends application/json even for streams). And
// responses/input_tokens, the prompt's token count (the openai SDK's responses.inputTokens.count).
import { Elysia } from 'elysia'
import { readJsonBody } from '../../http/body.ts'
import { generate } from '../../pipeline/generate.ts'
import { contextOf } from '../../pipeline/http.ts'
import type { GenerationServices, ThreadServices } from '../../services.ts'
import type { Handler } from '../../http/direct.ts'
import { countResponseTokens } from './count.ts'
import { responseObjectRoutes } from './objects.ts'
import { responsesSurface, threadStoreOf } from './surface.ts'

export const RESPONSES_PATHS = ['/api/alpha/v1/responses'] as const

/** Makes the surface (and its thread store) once: call it once per gateway. */
export function responsesHandler(s: GenerationServices & ThreadServices): Handler {
  const surface = responsesSurface(s)
  return async (request) => {
    const knownEventsOnly = request.headers.get('x-stainless-helper-method') === 'stream'
    return generate(s, surface, await readJsonBody(request, s.config.limits.maxBodyBytes), contextOf(request, { knownEventsOnly }))
  }
}

export function responsesRoutes(s: GenerationServices & ThreadServices, handle = responsesHandler(s)) {
  const app = new Elysia({ name: 'responses' })
  const counting = responsesSurface(s)
  for (const path of RESPONSES_PATHS) {
    app.post(path, ({ request }) => handle(request))
    app.post(`${path}/input_tokens`, async ({ request }) => {
      const raw = await readJsonBody(request, s.config.limits.maxBodyBytes)
      return { object: 'response.input_tokens', input_tokens: await countResponseTokens(s, counting, raw, contextOf(request)) }
    })
  }
  return app.use(responseObjectRoutes(threadStoreOf(s)))
}
