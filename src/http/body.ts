// Generation bodies: the size limit is decided from Content-Length up front, or while
// reading a chunked body, without reading the rest; malformed JSON is a 400 that says why.
import { HttpError } from './errors.ts'
import { MAX_BODY_NODES, MAX_BODY_STRINGS, parseJsonSafe } from './json-safe.ts'
import { checkElsewhere, mayHoldMorePartsSoon } from './parts.ts'
import { turnOfItsOwn } from '../lib/turn.ts'

export { checkJsonValue, MAX_BODY_NODES, MAX_BODY_STRINGS, MAX_JSON_DEPTH, parseJsonSafe } from './json-safe.ts'

function tooLarge(limit: number) {
  return new HttpError(413, `Request body exceeds the limit of ${limit} bytes`)
}

/** A body's text, refused (413) past `limit` bytes. Not itself async: the usual body, of a declared length, costs no frame of its own. */
export function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    const n = Number(declared)
    if (Number.isFinite(n) && n > limit) return Promise.reject(tooLarge(limit))
    // Bun holds a body to its declared length, so it cannot grow past the limit.
    if (Number.isFinite(n)) return request.text()
  }
  return readUndeclared(request, limit)
}

async function readUndeclared(request: Request, limit: number): Promise<string> {
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Past this many characters a body's parse, checks and decoding wait for a turn of their own. */
const LARGE_BODY = 64 * 1024

const BODY_PARTS = { nodes: MAX_BODY_NODES, strings: MAX_BODY_STRINGS }

/** A generation body (or another one-request body): bounded in bytes, and in parts (MAX_BODY_NODES, MAX_BODY_STRINGS). */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await readBodyText(request, limit)
  if (text.trim() === '') throw new HttpError(400, 'Request body is empty: expected a JSON object')
  if (text.length > LARGE_BODY) await turnOfItsOwn()
  // a body of a megabyte or less is scanned at once: no promise to wait for
  const more = mayHoldMorePartsSoon(text, BODY_PARTS)
  if (more === true || (more !== false && (await more))) await checkElsewhere(text, BODY_PARTS, 'JSON body')
  return parseJsonSafe(text, 'JSON body', MAX_BODY_NODES, MAX_BODY_STRINGS)
}
