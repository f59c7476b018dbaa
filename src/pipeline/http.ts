// From an HTTP request to the plain RequestContext the pipeline takes.
import { keyOf, requestInfo } from '../http/context.ts'
import type { RequestContext } from './context.ts'
import { cacheHeader } from '../cache/ask.ts'
import { cassetteHeader } from '../replay/cassette-name.ts'

export function contextOf(request: Request, extra?: Partial<RequestContext>): RequestContext {
  const info = requestInfo(request)
  return {
    apiKey: keyOf(request),
    requestId: info.requestId,
    signal: request.signal,
    accessLog: info,
    traceparent: request.headers.get('traceparent') ?? undefined,
    tracestate: request.headers.get('tracestate') ?? undefined,
    cacheTtlS: cacheHeader(request.headers),
    cassette: cassetteHeader(request.headers),
    limits: info.limits,
    ...extra,
  }
}
