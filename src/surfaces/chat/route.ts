// POST /api/alpha/v1/chat/completions: the chat codec on the shared generation pipeline.
// OpenAI-family models with a configured upstream take the pass-through path; every
// other model (Claude family, the mock provider) goes through the IR.
import { Elysia } from 'elysia'
import { readJsonBody } from '../../http/body.ts'
import { generate } from '../../pipeline/generate.ts'
import { contextOf } from '../../pipeline/http.ts'
import type { GenerationServices } from '../../services.ts'
import type { Handler } from '../../http/direct.ts'
import { chatSurface } from './codec.ts'

export const CHAT_PATH = '/api/alpha/v1/chat/completions'

export function chatHandler(s: GenerationServices): Handler {
  return async (request) => generate(s, chatSurface, await readJsonBody(request, s.config.limits.maxBodyBytes), contextOf(request))
}

export function chatRoutes(s: GenerationServices, handle = chatHandler(s)) {
  return new Elysia({ name: 'chat' }).post(CHAT_PATH, ({ request }) => handle(request))
}
