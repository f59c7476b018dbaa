// A `#` in a request target. HTTP's request target has no fragment (a client keeps it for
// itself), and one sent raw was routed as part of the path: `GET /api/v1/files#x` answered a
// 405 saying GET is not allowed there, `/health#x` a 404 naming `/health`, and a file id
// `abc#x` was looked up as that. A 400 naming it instead; an id holding `#` is sent as `%23`.
import { HttpError } from './errors.ts'

/** The 400 for a target (from `pathStart`) holding a raw `#`; else undefined. */
export function fragmentInUrl(url: string, pathStart: number): HttpError | undefined {
  if (url.indexOf('#', Math.max(pathStart, 0)) < 0) return undefined
  return new HttpError(400, "path: holds a '#' (a fragment, which a request does not send); send a '#' in an id or a query value as %23")
}
