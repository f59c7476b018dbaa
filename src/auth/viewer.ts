// Who is reading: the admin (SWITCHYARD_ADMIN_TOKEN), who sees every account, or one API key,
// which sees only its own things. The dashboard's read routes take either; the rest of /api
// takes keys only. The admin token is accepted on /api only for the GET routes listed here,
// and only after it failed as an API key, so the request path of a key never pays for it.
import { timingSafeEqual } from 'node:crypto'
import { HttpError } from '../http/errors.ts'
import { requestInfo, type ApiKey } from '../http/context.ts'

export type Viewer = { admin: true } | { admin: false; key: ApiKey }

/** GET routes under /api where the admin token reads across accounts. */
const ADMIN_READS = /^\/api\/v1\/(generations|usage|dashboard\/[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*)$/

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/** Constant time, length included: both sides are hashed to 32 bytes before the compare. */
export function sameToken(a: string, b: string): boolean {
  const digest = (v: string) => new Bun.CryptoHasher('sha256').update(v).digest()
  return timingSafeEqual(digest(a), digest(b))
}

/** True when the request carries `Authorization: Bearer <admin token>` (and a token is configured). */
export function bearerIsAdmin(headers: Headers, token: string | undefined): boolean {
  if (!token) return false
  const m = BEARER.exec(headers.get('authorization') ?? '')
  return m !== null && sameToken(m[1]!, token)
}

/** For the pipeline: is this refused-as-a-key /api request an admin read? */
export function adminReader(token: string | undefined) {
  return (req: Request, path: string): boolean => req.method === 'GET' && ADMIN_READS.test(path) && bearerIsAdmin(req.headers, token)
}

/** The reader of an authenticated /api request. */
export function viewerOf(req: Request): Viewer {
  const info = requestInfo(req)
  if (info.admin) return { admin: true }
  if (!info.key) throw new Error('viewerOf: request was not authenticated')
  return { admin: false, key: info.key }
}

/** For /admin routes that guard themselves (outside the admin plugin's hook). */
export function requireAdmin(req: Request, token: string | undefined): void {
  if (!token) throw new HttpError(404, `No route ${req.method} ${new URL(req.url).pathname.slice(0, 200)}`)
  if (!bearerIsAdmin(req.headers, token)) throw new HttpError(401, 'Admin routes need Authorization: Bearer <SWITCHYARD_ADMIN_TOKEN>')
}
