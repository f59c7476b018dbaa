// A TCP proxy a test can cut and restore: what a gateway sees when its database goes away
// (connections dropped, the port closed: new ones refused) and comes back on the same
// port, without stopping a server other tests share.
import type { Socket, TCPSocketListener } from 'bun'

export interface Proxy {
  port: number
  /** Drop every connection and refuse new ones. */
  cut(): void
  restore(): void
  stop(): void
}

export function startTcpProxy(targetHost: string, targetPort: number): Proxy {
  const pairs = new Set<{ client: Socket<unknown>; upstream?: Socket<unknown> }>()
  type Data = { pair: { client: Socket<unknown>; upstream?: Socket<unknown>; early: Uint8Array[] } }
  const listen = (port: number): TCPSocketListener<Data> => Bun.listen<Data>({
    hostname: '127.0.0.1',
    port,
    socket: {
      async open(client) {
        const pair = { client: client as Socket<unknown>, upstream: undefined as Socket<unknown> | undefined, early: [] as Uint8Array[] }
        client.data = { pair }
        pairs.add(pair)
        try {
          pair.upstream = await Bun.connect({
            hostname: targetHost,
            port: targetPort,
            socket: {
              data: (_s, chunk) => void client.write(chunk),
              close: () => void client.end(),
              error: () => void client.end(),
            },
          })
          for (const c of pair.early) pair.upstream.write(c)
          pair.early = []
        } catch {
          client.end()
        }
      },
      data(client, chunk) {
        const pair = client.data.pair
        if (pair.upstream) pair.upstream.write(chunk)
        else pair.early.push(new Uint8Array(chunk))
      },
      close(client) {
        const pair = client.data?.pair
        pair?.upstream?.end()
        if (pair) pairs.delete(pair)
      },
      error(client) {
        client.data?.pair.upstream?.end()
      },
    },
  })
  let listener: TCPSocketListener<Data> | undefined = listen(0)
  const port = listener.port
  return {
    port,
    cut() {
      listener?.stop(true)
      listener = undefined
      for (const p of pairs) {
        p.client.end()
        p.upstream?.end()
      }
      pairs.clear()
    },
    restore() {
      listener ??= listen(port)
    },
    stop() {
      this.cut()
    },
  }
}
