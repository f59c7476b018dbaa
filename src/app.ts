// Builds the Elysia app from the capability plugins. Tests and the server both use it;
// the outer pipeline (src/http/pipeline.ts) adds auth, limits, request ids and logging.
import { Elysia } from 'elysia'
import { adminRoutes } from './auth/admin.ts'
import { modelRoutes } from './http/models.ts'
import { generationRoutes } from './generations/routes.ts'
import { usageRoutes } from './usage/route.ts'
import { methodMatcher, renderError } from './http/onerror.ts'
import type { Services } from './services.ts'
import { filesRoutes } from './files/routes.ts'
import { chatRoutes } from './surfaces/chat/route.ts'
import { messagesRoutes } from './surfaces/messages/route.ts'
import { responsesRoutes } from './surfaces/responses/route.ts'
import { assertSurfaceParams } from './routing/rules.ts'
import { batchRoutes } from './batches/routes.ts'
import { messageBatchRoutes } from './batches/anthropic/routes.ts'
import { STORE_DOWN_MESSAGE, storeHealth } from './db/unavailable.ts'

export function createApp(s: Services) {
  // A generation surface without its parameter list would accept anything: refuse to start.
  assertSurfaceParams(['chat', 'messages', 'responses'])
  const batches = s.batches
  if (!batches) throw new Error('createApp: the services have no batches (buildServices starts them)')
  const health = storeHealth(s.storage)
  const app = new Elysia({ name: 'switchyard' })
  const allowed = methodMatcher(() => app.routes.map((r) => ({ method: r.method, path: r.path })))
  return app
    .onError({ as: 'global' }, ({ code, error, request }) => renderError(code, error, request, s.log, allowed))
    .get('/health', () => {
      const store = health()
      if (store.database === 'up') return { status: 'ok' }
      // {error} like every refusal, and which store is down
      return new Response(JSON.stringify({ status: 'degraded', ...store, error: STORE_DOWN_MESSAGE }), { status: 503, headers: { 'content-type': 'application/json' } })
    })
    .use(modelRoutes(s))
    .use(adminRoutes(s))
    .use(generationRoutes(s))
    .use(usageRoutes(s))
    .use(filesRoutes(s))
    .use(chatRoutes(s))
    .use(messagesRoutes(s))
    .use(responsesRoutes(s))
    .use(batchRoutes(s, batches))
    .use(messageBatchRoutes(s, batches))
}
