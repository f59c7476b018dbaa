// POST /api/alpha/v1/responses : the responses codec on
// the shared generation pipeline. Streams whenever the body says `stream: true`, whatever
// the Accept header says (the openai SDK sends application/json even for streams). And
// responses/input_tokens, the prompt's token count (the openai SDK's responses.inputTokens.count).
import { Elysia } from 'elysia'
import { readJsonBody } from '../../http/body.ts'
import { watchedResponse } from '../../lib/watched-body.ts'
import { generate } from '../../pipeline/generate.ts'
import { contextOf } from '../../pipeline/http.ts'
import type { GenerationServices, ThreadServices } from '../../services.ts'
import type { Handler } from '../../http/direct.ts'
import type { SurfaceSpec } from '../../pipeline/surface.ts'
import { countResponseTokens } from './count.ts'
import { responseObjectRoutes } from './objects.ts'
import { responsesSurface, threadStoreOf } from './surface.ts'
import { conversationRoutes } from './conversations/routes.ts'
import { conversationOf } from './conversation-of.ts'

export const RESPONSES_PATHS = ['/api/alpha/v1/responses'] as const

const surfaces = new WeakMap<ThreadServices, SurfaceSpec>()

/** The gateway's one responses surface (and its thread store): the generation route and the count share it. */
function surfaceOf(s: GenerationServices & ThreadServices): SurfaceSpec {
  let surface = surfaces.get(s)
  if (!surface) surfaces.set(s, (surface = responsesSurface(s)))
  return surface
}

export function responsesHandler(s: GenerationServices & ThreadServices): Handler {
  const surface = surfaceOf(s)
  const threads = threadStoreOf(s)
  return async (request) => {
    const knownEventsOnly = request.headers.get('x-stainless-helper-method') === 'stream'
    const raw = await readJsonBody(request, s.config.limits.maxBodyBytes)
    const rc = contextOf(request, { knownEventsOnly })
    // a stored turn that continues a conversation by its name holds it from before its latest
    // response is read until it is saved itself (or the request ends): two at once would both
    // continue from that one, and the conversation would keep only one of them
    const name = conversationOf(raw)
    if (name === undefined) return generate(s, surface, raw, rc)
    const release = threads.claimTurn(rc.apiKey.id, name)
    rc.releaseTurn = release
    let res: Response
    try {
      res = await generate(s, surface, raw, rc)
    } catch (e) {
      release()
      throw e
    }
    if (!res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
      release()
      return res
    }
    return watchedResponse(res, { end: release })
  }
}

export function responsesRoutes(s: GenerationServices & ThreadServices, handle = responsesHandler(s)) {
  const app = new Elysia({ name: 'responses' })
  const counting = surfaceOf(s)
  for (const path of RESPONSES_PATHS) {
    app.post(path, ({ request }) => handle(request))
    app.post(`${path}/input_tokens`, async ({ request }) => {
      const raw = await readJsonBody(request, s.config.limits.maxBodyBytes)
      return { object: 'response.input_tokens', input_tokens: await countResponseTokens(s, counting, raw, contextOf(request)) }
    })
  }
  return app.use(responseObjectRoutes(threadStoreOf(s))).use(conversationRoutes(s, threadStoreOf(s)))
}
