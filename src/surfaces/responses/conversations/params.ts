// The bodies and queries of the Conversations API, checked: each problem a 400 naming the
// field. Items are checked as a responses request's input items are (items.ts).
import { badRequest } from '../../../http/errors.ts'
import { eachOnce, onlyKnownParams } from '../../../http/query.ts'
import { isObj } from '../../../lib/json.ts'
import { typeName } from '../../../routing/router.ts'
import { listOfItems, type Item } from '../items.ts'
import type { Metadata } from './store.ts'

/** Items one create (of a conversation, or of items in one) adds at most, as OpenAI's. */
export const MAX_ITEMS = 20
const METADATA = { pairs: 16, key: 64, value: 512 }
const LIMIT = { dflt: 20, min: 1, max: 100 }

type Obj = Record<string, unknown>

function body(raw: unknown, known: readonly string[]): Obj {
  if (!isObj(raw)) throw badRequest(`body: expected a JSON object, got ${typeName(raw)}`)
  for (const k of Object.keys(raw)) if (!known.includes(k)) throw badRequest(`${k.slice(0, 64)}: unknown parameter; this takes ${known.join(', ')}`)
  return raw
}

/** `metadata`: up to 16 string pairs, keys of 64 characters at most, values of 512; null or absent is none. */
export function metadataOf(v: unknown): Metadata | null {
  if (v === undefined || v === null) return null
  if (!isObj(v)) throw badRequest(`metadata: expected an object of string pairs, got ${typeName(v)}`)
  const pairs = Object.entries(v)
  if (pairs.length > METADATA.pairs) throw badRequest(`metadata: ${pairs.length} pairs, more than ${METADATA.pairs}`)
  for (const [k, value] of pairs) {
    if (k.length > METADATA.key) throw badRequest(`metadata: key "${k.slice(0, 64)}…" is longer than ${METADATA.key} characters`)
    if (typeof value !== 'string') throw badRequest(`metadata.${k}: expected a string, got ${typeName(value)}`)
    if (value.length > METADATA.value) throw badRequest(`metadata.${k}: longer than ${METADATA.value} characters`)
  }
  return v as Metadata
}

/** `items`: up to 20 input items; `required` when the body is about nothing else. */
function itemsOf(v: unknown, required: boolean): Item[] {
  if (v === undefined || (v === null && !required)) {
    if (required) throw badRequest('items: required (an array of up to 20 items)')
    return []
  }
  if (!Array.isArray(v)) throw badRequest(`items: expected an array of items, got ${typeName(v)}`)
  if (v.length > MAX_ITEMS) throw badRequest(`items: ${v.length} items, more than ${MAX_ITEMS} at a time`)
  return listOfItems(v, 'items')
}

export function createBody(raw: unknown): { items: Item[]; metadata: Metadata | null } {
  const b = body(raw ?? {}, ['items', 'metadata'])
  return { items: itemsOf(b.items, false), metadata: metadataOf(b.metadata) }
}

export function updateBody(raw: unknown): Metadata | null {
  const b = body(raw, ['metadata'])
  if (!('metadata' in b)) throw badRequest('metadata: required (an object of up to 16 string pairs, or null)')
  return metadataOf(b.metadata)
}

export function itemsBody(raw: unknown): Item[] {
  return itemsOf(body(raw, ['items']).items, true)
}

/** `include` is a list (`include[]=a&include[]=b`); every other parameter is read once, so a repeat is a 400. */
const INCLUDES = ['include', 'include[]']
const LIST: ReadonlySet<string> = new Set(['limit', 'order', 'after', ...INCLUDES])
const INCLUDE_ONLY: ReadonlySet<string> = new Set(INCLUDES)

/** The listing's query: `limit` 1 to 100 (20), `order` asc or desc (desc), `after` an item id; `include` is taken and changes nothing. */
export function listQuery(q: URLSearchParams): { limit: number; order: 'asc' | 'desc'; after?: string } {
  onlyKnownParams(q, LIST, 'listing items takes limit, order, after, include')
  eachOnce(q, INCLUDES)
  const raw = q.get('limit')
  const limit = raw === null ? LIMIT.dflt : /^\d+$/.test(raw) ? Number(raw) : NaN
  if (!Number.isInteger(limit) || limit < LIMIT.min || limit > LIMIT.max) throw badRequest(`limit: must be an integer from ${LIMIT.min} to ${LIMIT.max}`)
  const order = q.get('order') ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw badRequest('order: must be "asc" or "desc"')
  return { limit, order, after: q.get('after') ?? undefined }
}

/** A query that may hold `include` alone (a retrieve, an items create). */
export function includeOnly(q: URLSearchParams): void {
  onlyKnownParams(q, INCLUDE_ONLY, 'this takes include')
}
