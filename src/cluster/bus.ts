// The change bus: how one instance tells the others that something they cache changed (a key
// disabled, credited, deleted). In memory for a single instance; Redis pub/sub for several
// (redis-bus.ts), or PostgreSQL LISTEN/NOTIFY when there is no Redis.

/**
 * A message, or null when messages may have been lost (the bus reconnected): a handler then
 * drops whatever it caches for the topic.
 */
export type BusHandler = (payload: string | null) => void

export interface Bus {
  /** What it runs on, for the banner. */
  readonly kind: string
  /** Delivered to every subscriber of the topic, this instance's own included. Never throws. */
  publish(topic: string, payload: string): Promise<void>
  /** Returns the unsubscribe. */
  subscribe(topic: string, handler: BusHandler): () => void
  close(): Promise<void> | void
}

/** Handlers by topic, shared by the implementations. */
export class Subscribers {
  private byTopic = new Map<string, Set<BusHandler>>()

  add(topic: string, handler: BusHandler): () => void {
    let set = this.byTopic.get(topic)
    if (!set) this.byTopic.set(topic, (set = new Set()))
    set.add(handler)
    return () => void set.delete(handler)
  }

  topics(): string[] {
    return [...this.byTopic.keys()]
  }

  deliver(topic: string, payload: string | null) {
    for (const h of this.byTopic.get(topic) ?? []) {
      try {
        h(payload)
      } catch {
        // one subscriber's failure is not the publisher's
      }
    }
  }

  /** Every topic: messages may have been missed. */
  gap() {
    for (const t of this.byTopic.keys()) this.deliver(t, null)
  }
}

export class MemoryBus implements Bus {
  readonly kind = 'memory'
  private subs = new Subscribers()

  async publish(topic: string, payload: string) {
    // after the publisher's own turn, as a message over the network would arrive
    queueMicrotask(() => this.subs.deliver(topic, payload))
  }

  subscribe(topic: string, handler: BusHandler) {
    return this.subs.add(topic, handler)
  }

  close() {}
}
