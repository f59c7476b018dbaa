// The admin's hand on the response cache: what it holds (GET /admin/v1/cache) and emptying it
// (DELETE /admin/v1/cache), on every instance at once, as they share its store.
import type { CacheStore } from './store.ts'

export async function cacheStats(store: CacheStore | undefined) {
  if (!store) return { object: 'cache', store: 'none', entries: 0, bytes: 0, max_bytes: 0 }
  const { entries, bytes } = await store.stats()
  return { object: 'cache', store: store.kind, entries, bytes, max_bytes: store.maxBytes }
}

export async function clearCache(store: CacheStore | undefined) {
  return { object: 'cache', deleted: store ? await store.clear() : 0 }
}
