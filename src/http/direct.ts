// The generation routes, answered without Elysia's router: they are most of the traffic and
// take nothing from Elysia but the request, so the pipeline calls them straight from an exact
// (method, path) table and renders what they throw as the app's onError would. Every other
// path, and every other spelling of these (a trailing slash), goes through the app, where the
// same handlers are mounted too.
import type { Logger } from './log.ts'
import { renderError, type KnownFailure } from './onerror.ts'

export type Handler = (request: Request) => Promise<Response>

export interface DirectRoutes {
  /** The handler for a POST to exactly this path, if it is one of the table's. */
  post(path: string): Handler | undefined
}

export function directRoutes(table: Record<string, Handler>, log: Logger, known: readonly KnownFailure[] = []): DirectRoutes {
  const routes = new Map<string, Handler>()
  const noMethods = () => []
  for (const [path, handle] of Object.entries(table)) {
    routes.set(path, async (request) => {
      try {
        return await handle(request)
      } catch (e) {
        return renderError('UNKNOWN', e, request, log, noMethods, known)
      }
    })
  }
  return { post: (path) => routes.get(path) }
}
