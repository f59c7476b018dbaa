// Key changes (disable, credit, a new key) reach every instance on a shared PostgreSQL
// database within moments: the instance that made one publishes the key's id, and every
// instance reloads its keys when it hears one. The Redis side offers the same over pub/sub.
import type { Services } from '../services.ts'
import { PgNotify } from './pg-notify.ts'

export const KEYS_TOPIC = 'keys'

/** Subscribes the key store to changes made elsewhere; false when the database is not shared. */
export async function watchKeyChanges(s: Services): Promise<boolean> {
  const client = s.storage.pg
  if (!client) return false
  const bus = await PgNotify.open(client)
  const stop = await bus.subscribe(KEYS_TOPIC, () => void s.keys.invalidate())
  s.keys.onChange = (id) =>
    void bus.publish(KEYS_TOPIC, id).catch((e) => s.log.warn('key change not published; other instances see it at their next poll', { error: String(e) }))
  s.onClose.push(async () => {
    s.keys.onChange = undefined
    await stop().catch(() => {})
  })
  return true
}

/** For a process that changes keys and exits (the CLI): tell the running instances. */
export async function announceKeyChange(s: Pick<Services, 'storage'>, keyId: string): Promise<void> {
  const client = s.storage.pg
  if (!client) return
  await (await PgNotify.open(client)).publish(KEYS_TOPIC, keyId)
}
