// The admin's listing of every key, oldest first: read a page at a time (KeyStore.pages) and
// written as JSON a page at a time, a turn of the loop after each, so a gateway with 100,000
// keys goes on serving while it is made (read and written at once, it held the loop ~2 s).
import type { ApiKey } from '../http/context.ts'
import type { KeyStore } from './keys.ts'
import { nextTurn } from '../lib/turn.ts'

const PIECE = 1000

/** Oldest first; keys made in the same second by id, so the order is the same every time. */
const byCreation = (a: ApiKey, b: ApiKey) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** `{object: "list", data}` of every key, each as `shown` makes it. */
export async function keyListResponse(keys: KeyStore, shown: (k: ApiKey) => unknown): Promise<Response> {
  const all: ApiKey[] = []
  for await (const page of keys.pages()) for (const k of page) all.push(k)
  // ids are not in creation order; a sort of 100,000 keys takes a few tens of ms
  all.sort(byCreation)
  await nextTurn()
  const parts: string[] = ['{"object":"list","data":[']
  for (let i = 0; i < all.length; i += PIECE) {
    if (i > 0) {
      parts.push(',')
      await nextTurn()
    }
    parts.push(all.slice(i, i + PIECE).map((k) => JSON.stringify(shown(k))).join(','))
  }
  parts.push(']}')
  return new Response(new Blob(parts), { headers: { 'content-type': 'application/json' } })
}
