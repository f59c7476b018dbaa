// Generation bodies: the size limit is decided from Content-Length up front, or while
// reading a chunked body, without reading the rest; malformed JSON is a 400 that says why.
import { HttpError } from './errors.ts'

function tooLarge(limit: number) {
  return new HttpError(413, `Request body exceeds the limit of ${limit} bytes`)
}

export async function readBodyText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    const n = Number(declared)
    if (Number.isFinite(n) && n > limit) throw tooLarge(limit)
    // Bun holds a body to its declared length, so it cannot grow past the limit.
    if (Number.isFinite(n)) return request.text()
  }
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

/** Deeper bodies are refused: nothing a real client sends nests this far, and recursive code (schemas, encoders) must not overflow. */
export const MAX_JSON_DEPTH = 64
/**
 * Keys that reach an object's prototype when a body is copied key by key (D3): refused
 * anywhere in a body rather than trusted to every copy being careful.
 */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

function pathOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`
  const k = key.length > 64 ? key.slice(0, 64) + '…' : key
  return parent ? `${parent}.${k}` : k
}

/**
 * Throws a 400 naming the place of a forbidden key or of nesting past MAX_JSON_DEPTH.
 * Iterative (a body 20,000 levels deep must not overflow the checker itself), and its cost
 * is the number of objects and arrays, not of bytes.
 */
export function checkJsonValue(root: unknown): void {
  const stack: [unknown, string, number][] = [[root, '', 0]]
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (depth >= MAX_JSON_DEPTH) throw new HttpError(400, `${path || 'Request body'}: nested more than ${MAX_JSON_DEPTH} levels deep`)
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) if (typeof v[i] === 'object' && v[i] !== null) stack.push([v[i], pathOf(path, i), depth + 1])
      continue
    }
    for (const k of Object.keys(v)) {
      if (FORBIDDEN_KEYS.has(k)) throw new HttpError(400, `${pathOf(path, k)}: the key "${k}" is not allowed in a request body`)
      const child = (v as Record<string, unknown>)[k]
      if (typeof child === 'object' && child !== null) stack.push([child, pathOf(path, k), depth + 1])
    }
  }
}

/** JSON.parse, then the D3 checks: for every JSON a client sends (bodies, JSONL lines). */
export function parseJsonSafe(text: string, what = 'JSON body'): unknown {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (e) {
    throw new HttpError(400, `Malformed ${what}: ${(e as Error).message}`)
  }
  checkJsonValue(v)
  return v
}

export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = await readBodyText(request, limit)
  if (text.trim() === '') throw new HttpError(400, 'Request body is empty: expected a JSON object')
  return parseJsonSafe(text)
}
