// The admin's listing of every key, oldest first: read a page at a time (KeyStore.pages) and
// sent as JSON a piece at a time, each piece made when the connection asks for more, so a
// gateway with 100,000 keys goes on serving while it is made (read and written at once, it held
// the loop ~2 s; its 18 MB joined into one Blob at the end, 70–115 ms more).
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
  const encoder = new TextEncoder()
  let i = 0
  const body = new ReadableStream<Uint8Array>({
    // one piece a pull, a turn of the loop before each but the first: however fast the
    // connection takes them, other work runs between
    async pull(out) {
      if (i > 0) await nextTurn()
      const head = i === 0 ? '{"object":"list","data":[' : ','
      const piece = all.slice(i, (i += PIECE)).map((k) => JSON.stringify(shown(k))).join(',')
      const last = i >= all.length
      out.enqueue(encoder.encode(head + piece + (last ? ']}' : '')))
      if (last) out.close()
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/json' } })
}
