// The change bus on a shared PostgreSQL database, for instances with no Redis: NOTIFY to
// publish, LISTEN to hear (pg-notify.ts). The same Bus as the memory and Redis ones, so the
// key store neither knows nor cares which one carries its notices.
import type { SQL } from 'bun'
import type { Logger } from '../http/log.ts'
import { Subscribers, type Bus, type BusHandler } from './bus.ts'
import { PgNotify } from './pg-notify.ts'

export class PgBus implements Bus {
  readonly kind = 'postgresql LISTEN/NOTIFY'
  private subs = new Subscribers()
  private listening = new Map<string, Promise<() => Promise<void>>>()

  private constructor(
    private readonly notify: PgNotify,
    private readonly log: Logger,
  ) {}

  static async open(client: SQL, log: Logger): Promise<PgBus> {
    return new PgBus(await PgNotify.open(client), log)
  }

  async publish(topic: string, payload: string): Promise<void> {
    try {
      await this.notify.publish(topic, payload)
    } catch (e) {
      // the change itself is stored: other instances see it at their next poll
      this.log.warn('change not published over NOTIFY; other instances see it at their next poll', { topic, error: String(e) })
    }
  }

  subscribe(topic: string, handler: BusHandler): () => void {
    const off = this.subs.add(topic, handler)
    if (!this.listening.has(topic)) {
      const listen = this.notify.subscribe(topic, (payload) => this.subs.deliver(topic, payload))
      listen.catch((e) => this.log.warn('LISTEN failed; key changes from other instances arrive by polling', { topic, error: String(e) }))
      this.listening.set(topic, listen)
    }
    return off
  }

  /** Resolves once every topic subscribed so far is listened to. */
  async ready(): Promise<void> {
    await Promise.allSettled(this.listening.values())
  }

  async close(): Promise<void> {
    const stops = [...this.listening.values()]
    this.listening.clear()
    for (const s of stops) await s.then((stop) => stop()).catch(() => {})
  }
}
