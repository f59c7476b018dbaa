// Builds the Elysia app from the capability plugins. Tests and the server both use it;
// the outer handler (src/front.ts) adds auth, limits, request ids and logging.
import { Elysia } from 'elysia'
import { adminRoutes } from './auth/admin.ts'
import { modelRoutes } from './config/routes.ts'
import { generationRoutes } from './generations/routes.ts'
import { usageRoutes } from './usage/route.ts'
import { methodMatcher, renderError } from './http/onerror.ts'
import { KNOWN_FAILURES } from './failures.ts'
import type { AdmissionServices, BaseServices, GenerationServices, ThreadServices } from './services.ts'
import type { BatchService } from './batches/service.ts'
import { filesRoutes } from './files/routes.ts'
import { CHAT_PATH, chatHandler, chatRoutes } from './surfaces/chat/route.ts'
import { MESSAGES_PATHS, messagesHandler, messagesRoutes } from './surfaces/messages/route.ts'
import { RESPONSES_PATHS, responsesHandler, responsesRoutes } from './surfaces/responses/route.ts'
import type { Handler } from './http/direct.ts'
import { batchRoutes } from './batches/routes.ts'
import { messageBatchRoutes } from './batches/anthropic/routes.ts'
import { STORE_DOWN_MESSAGE } from './db/unavailable.ts'
import { dashboardDataRoutes } from './ui/data-routes.ts'
import { uiRoutes } from './ui/plugin.ts'
import { metricsRoutes } from './metrics/route.ts'

/** The generation handlers, made once: mounted in the app and in the pipeline's direct table. */
export function generationHandlers(s: GenerationServices & ThreadServices) {
  return { chat: chatHandler(s), messages: messagesHandler(s), responses: responsesHandler(s) }
}

/** Exact POST paths the pipeline answers without the router (http/direct.ts). */
export function directTable(h: ReturnType<typeof generationHandlers>): Record<string, Handler> {
  return {
    [CHAT_PATH]: h.chat,
    ...Object.fromEntries(MESSAGES_PATHS.map((p) => [p, h.messages])),
    ...Object.fromEntries(RESPONSES_PATHS.map((p) => [p, h.responses])),
  }
}

/** What the app's routes serve from: the base, generation's slice, the keys, what instances share (for /health), and the batches built on them. */
export type AppServices = BaseServices & GenerationServices & Pick<AdmissionServices, 'keys' | 'cluster'> & { batches: BatchService }

export function createApp(s: AppServices, handlers = generationHandlers(s)) {
  const batches = s.batches
  const app = new Elysia({ name: 'switchyard' })
  const allowed = methodMatcher(() => app.routes.map((r) => ({ method: r.method, path: r.path })))
  return app
    .onError({ as: 'global' }, ({ code, error, request }) => renderError(code, error, request, s.log, allowed, KNOWN_FAILURES))
    .get('/health', () => {
      const store = s.storeHealth()
      // Redis away is named but stays a 200: every instance shares it, a balancer would drop them all
      const redis = s.cluster?.redis ? { redis: s.cluster.redis.downSince === null ? 'up' : 'down' } : {}
      if (store.database === 'up') return { status: 'ok', ...redis }
      // the database is down: {error} like every refusal, and which store is down
      return new Response(JSON.stringify({ status: 'degraded', ...store, ...redis, error: STORE_DOWN_MESSAGE }), { status: 503, headers: { 'content-type': 'application/json' } })
    })
    .use(modelRoutes(s))
    .use(adminRoutes(s))
    .use(generationRoutes(s))
    .use(usageRoutes(s))
    .use(metricsRoutes(s))
    .use(filesRoutes(s))
    .use(chatRoutes(s, handlers.chat))
    .use(messagesRoutes(s, handlers.messages))
    .use(responsesRoutes(s, handlers.responses))
    .use(batchRoutes(s, batches))
    .use(messageBatchRoutes(s, batches))
    .use(dashboardDataRoutes(s, batches))
    .use(uiRoutes())
}
