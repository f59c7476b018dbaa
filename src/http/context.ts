// What the gateway knows about a request once it has passed auth: the key, the request
// id, the client IP. Kept beside the Request (not in Elysia's typed context) so that any
// route plugin can read it without depending on how the auth plugin is composed.

export interface ApiKey {
  id: string
  account: string
  name: string
  keyPrefix: string
  status: 'active' | 'inactive'
  /** USD granted; null = unlimited. */
  credits: number | null
  spent: number
  rpm: number | null
  createdAt: number
  lastUsedAt: number | null
  /** Epoch ms at which the secret a rotation replaced stops working; null when none works. */
  previousExpiresAt?: number | null
}

export interface RequestInfo {
  requestId: string
  ip: string
  startedAt: number
  key?: ApiKey
  /** The admin token, on the few /api reads that take it (auth/viewer.ts). */
  admin?: boolean
  /** Set by routes that know it, for the access log. */
  model?: string
  /** The request's trace and span, when it is traced (the access log names them, so logs join traces). */
  traceId?: string
  spanId?: string
  /** The shared rate limits, not yet decided when the handler starts (front.ts). */
  limits?: PendingLimits
}

/**
 * A request's shared rate limits, taken alongside its handling rather than before it: being
 * taken already (an unlimited key: the round trip overlaps the body's read), or taken when
 * first asked (a funded key: asked in the same turn as its admission, the two calls go to
 * Redis together). `allowed()` starts the take if need be; true once the limits allow the
 * request, false when they refuse it or could not be read. Never rejects.
 */
export interface PendingLimits {
  allowed(): Promise<boolean>
}

const infos = new WeakMap<Request, RequestInfo>()

export function setRequestInfo(req: Request, info: RequestInfo) {
  infos.set(req, info)
}

export function requestInfo(req: Request): RequestInfo {
  let i = infos.get(req)
  if (!i) {
    i = { requestId: crypto.randomUUID(), ip: '', startedAt: performance.now() }
    infos.set(req, i)
  }
  return i
}

export function requestIdOf(req: Request): string {
  return requestInfo(req).requestId
}

/** The authenticated key of a request under /api. Routes there can rely on it. */
export function keyOf(req: Request): ApiKey {
  const k = infos.get(req)?.key
  if (!k) throw new Error('keyOf: request was not authenticated')
  return k
}
