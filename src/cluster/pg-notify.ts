// Messages between instances that share a PostgreSQL database and no Redis: NOTIFY to
// publish, LISTEN on one dedicated connection to subscribe (Bun.SQL keeps it, reconnects it
// and subscribes again after a drop). Channels are named after the schema, so gateways in
// different schemas of one database never hear each other.
import type { SQL } from 'bun'

export type Handler = (payload: string) => void

export class PgNotify {
  private constructor(
    private readonly client: SQL,
    private readonly prefix: string,
  ) {}

  static async open(client: SQL): Promise<PgNotify> {
    const [{ schema }] = (await client.unsafe('SELECT current_schema() AS schema')) as { schema: string }[]
    // a channel is an identifier: at most 63 bytes
    const tag = new Bun.CryptoHasher('sha256').update(schema).digest('hex').slice(0, 16)
    return new PgNotify(client, `switchyard_${tag}_`)
  }

  private channel(topic: string): string {
    return (this.prefix + topic).slice(0, 63)
  }

  /** Delivered to every subscriber of `topic` on every instance, this one included. */
  async publish(topic: string, payload = ''): Promise<void> {
    await this.client.notify(this.channel(topic), payload)
  }

  /** Resolves once listening; the returned function stops it. */
  async subscribe(topic: string, handler: Handler): Promise<() => Promise<void>> {
    const sub = await this.client.listen(this.channel(topic), (payload) => {
      try {
        handler(payload)
      } catch {
        // a subscriber's failure is its own; the connection keeps listening
      }
    })
    return () => sub.unlisten()
  }
}
