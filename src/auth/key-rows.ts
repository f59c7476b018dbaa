// A key's row and what memory makes of it: secrets made and hashed, a row turned into the key
// the cache holds (with the hashes it was read under, out of sight), and the cache's maps
// written so that a rotated key's old secret goes (or stays for its grace period).
import { apiKeys } from '../db/schema.ts'
import type { ApiKey } from '../http/context.ts'
import { roundUsd } from '../lib/usd.ts'

export const KEY_PREFIX = 'sk-sy-'

export function hashKey(key: string): string {
  // the one-shot form: no hasher object a request (about a sixth of the cost, measured in a loop)
  return Bun.SHA256.hash(key, 'hex') as string
}

export function generateKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return KEY_PREFIX + Buffer.from(bytes).toString('base64url')
}

/** What listings show of a secret: enough to tell keys apart, nothing to use. */
export const prefixOf = (key: string) => key.slice(0, KEY_PREFIX.length + 4)

export interface KeyInput {
  name: string
  account?: string
  credits?: number | null
  rpm?: number | null
  /** Use this exact key (bootstrap); otherwise one is generated. */
  key?: string
}

export interface KeyPatch {
  name?: string
  account?: string
  status?: 'active' | 'inactive'
  credits?: number | null
  rpm?: number | null
}

export type Row = typeof apiKeys.$inferSelect

export interface Loading {
  byHash: Map<string, ApiKey | null>
  byId: Map<string, ApiKey>
}

export const emptyMaps = (): Loading => ({ byHash: new Map(), byId: new Map() })

/**
 * The hash a key's row was read with, on the key itself (a symbol: no listing or JSON shows it):
 * what a rotation read later drops. A map of id to hash held 68 bytes more a key (100,000 keys:
 * 6.8 MB, twice that during a full load).
 */
const HASH = Symbol('hash read')
/** Likewise the hash of the secret a rotation replaced, while its grace period lasts. */
const PREVIOUS = Symbol('previous hash read')
type Held = ApiKey & { [HASH]?: string; [PREVIOUS]?: string }
export const hashOf = (k: ApiKey | undefined) => (k as Held | undefined)?.[HASH]
const previousOf = (k: ApiKey | undefined) => (k as Held | undefined)?.[PREVIOUS]

/** Whether the row's previous secret still works at `now`. */
const previousLive = (r: Row, now = Date.now()) => r.previousKeyHash !== null && r.previousExpiresAt !== null && r.previousExpiresAt > now

/**
 * Whether `k`, found under hash `h`, may be served by it: by its secret always, by the secret a
 * rotation replaced only until its grace period ends.
 */
export const servesBy = (k: ApiKey, h: string) => hashOf(k) === h || (previousOf(k) === h && (k.previousExpiresAt ?? 0) > Date.now())

/**
 * `r` as the maps' entry for its key. A key whose secret was rotated since the maps last held it
 * has its old hash dropped, so the old secret is refused from then on (looked up, it is no key).
 * Which of two rows of a key is the newer is not told by `updated_at` (writers' clocks differ):
 * a row read across a rotation is set right by the read that follows the change (`invalidate`
 * reads again after a read under way), or, for a lookup, by reading the row again (`lookup`).
 */
export function put(maps: Loading, r: Row, k: ApiKey): void {
  const held = maps.byId.get(r.id)
  const previous = previousLive(r) ? r.previousKeyHash : null
  for (const before of [hashOf(held), previousOf(held)]) {
    if (before !== undefined && before !== r.keyHash && before !== previous && maps.byHash.get(before)?.id === r.id) maps.byHash.delete(before)
  }
  maps.byHash.set(r.keyHash, k)
  if (previous !== null) maps.byHash.set(previous, k)
  maps.byId.set(k.id, k)
}

/** `unwritten`: costs charged and not yet stored (billing's). */
export function toKey(r: Row, unwritten = 0): ApiKey {
  const live = previousLive(r)
  const k: Held = {
    id: r.id,
    account: r.account,
    name: r.name,
    keyPrefix: r.keyPrefix,
    status: r.status,
    credits: r.credits,
    spent: unwritten === 0 ? r.spent : roundUsd(r.spent + unwritten),
    rpm: r.rpm,
    createdAt: r.createdAt,
    lastUsedAt: r.lastUsedAt,
    previousExpiresAt: live ? r.previousExpiresAt : null,
    [HASH]: r.keyHash,
  }
  if (live) k[PREVIOUS] = r.previousKeyHash!
  return k
}

export function newKey(input: KeyInput): { key: string; row: Row } {
  const key = input.key ?? generateKey()
  const now = Date.now()
  const row: Row = {
    id: 'key_' + Bun.randomUUIDv7().replaceAll('-', '').slice(-20),
    account: input.account ?? 'default',
    name: input.name,
    keyHash: hashKey(key),
    keyPrefix: prefixOf(key),
    status: 'active',
    credits: input.credits == null ? null : roundUsd(input.credits),
    spent: 0,
    rpm: input.rpm ?? null,
    createdAt: Math.floor(now / 1000),
    lastUsedAt: null,
    updatedAt: now,
    previousKeyHash: null,
    previousExpiresAt: null,
  }
  return { key, row }
}
