// The change bus on Redis pub/sub. Subscribing puts a Redis connection in a mode where it can
// do nothing else, so the bus has a connection of its own; publishing goes through the shared
// command connection. A lost subscriber connection is reopened every second until it works;
// then every topic gets a gap (null) message, since whatever was published meanwhile is lost.
import type { RedisClient } from 'bun'
import type { Logger } from '../http/log.ts'
import { Subscribers, type Bus, type BusHandler } from './bus.ts'
import type { SharedRedis } from './redis.ts'

const RESUBSCRIBE_MS = 1_000

export class RedisBus implements Bus {
  readonly kind = 'redis pub/sub'
  private subs = new Subscribers()
  private conn: RedisClient | null = null
  private opening: Promise<void> | null = null
  private timer: ReturnType<typeof setInterval>
  private closed = false
  private lost = false

  private readonly channelPrefix: string

  constructor(private readonly redis: SharedRedis, private readonly log: Logger) {
    this.channelPrefix = redis.settings.prefix + 'bus:'
    this.timer = setInterval(() => void this.ensure(), RESUBSCRIBE_MS)
    this.timer.unref?.()
  }

  /** Resolves once subscribed (or failed: the timer tries again). */
  ready(): Promise<void> {
    return this.ensure()
  }

  private ensure(): Promise<void> {
    if (this.closed || this.conn?.connected) return Promise.resolve()
    return (this.opening ??= this.open().finally(() => (this.opening = null)))
  }

  private async open() {
    const c = this.redis.newClient()
    try {
      await c.connect()
      const topics = this.subs.topics()
      if (topics.length > 0) await c.subscribe(topics.map((t) => this.channelPrefix + t), (msg, channel) => this.subs.deliver(channel.slice(this.channelPrefix.length), msg))
      c.onclose = () => {
        if (!this.closed) this.lost = true
      }
      this.conn?.close()
      this.conn = c
      if (this.lost) {
        this.lost = false
        this.log.warn('redis bus: subscribed again; caches are dropped, changes may have been missed')
        this.subs.gap()
      }
    } catch (e) {
      c.close()
      if (!this.lost) this.log.warn('redis bus: cannot subscribe', { error: String((e as Error)?.message ?? e) })
      this.lost = true
    }
  }

  async publish(topic: string, payload: string) {
    try {
      await this.redis.send('PUBLISH', [this.channelPrefix + topic, payload])
    } catch (e) {
      // the others will drop their caches when their subscriptions come back
      this.log.warn('redis bus: publish failed', { topic, error: String((e as Error)?.message ?? e) })
      this.subs.deliver(topic, payload)
    }
  }

  subscribe(topic: string, handler: BusHandler) {
    const fresh = !this.subs.topics().includes(topic)
    const off = this.subs.add(topic, handler)
    if (fresh && this.conn?.connected) {
      void this.conn
        .subscribe(this.channelPrefix + topic, (msg, channel) => this.subs.deliver(channel.slice(this.channelPrefix.length), msg))
        .catch(() => (this.lost = true))
    }
    return off
  }

  close() {
    this.closed = true
    clearInterval(this.timer)
    this.conn?.close()
    this.conn = null
  }
}
