// A TCP proxy a test can cut and restore: what a gateway sees when its database (or its S3)
// goes away (connections dropped, the port closed: new ones refused) and comes back on the
// same port, without stopping a server other tests share. What a socket cannot take at once
// waits for its drain: a socket write may take only part of a chunk (an upload of megabytes).
import type { Socket, TCPSocketListener } from 'bun'

export interface Proxy {
  port: number
  /** Drop every connection and refuse new ones. */
  cut(): void
  /** Refuse new connections (or take them again), keeping those open: a database at its connection limit. */
  refuseNew(on: boolean): void
  restore(): void
  stop(): void
}

/** One direction of a connection: bytes for `socket`, in order, however much it takes at a time. */
class Outbox {
  private queue: Uint8Array[] = []
  socket?: Socket<unknown>

  send(chunk: Uint8Array) {
    if (!this.socket || this.queue.length > 0) return void this.queue.push(new Uint8Array(chunk))
    const n = this.socket.write(chunk)
    if (n < chunk.byteLength) this.queue.push(new Uint8Array(chunk.subarray(Math.max(n, 0))))
  }

  /** The socket is there, or can take more. */
  drain() {
    while (this.socket && this.queue.length > 0) {
      const head = this.queue[0]!
      const n = this.socket.write(head)
      if (n < head.byteLength) {
        this.queue[0] = head.subarray(Math.max(n, 0))
        return
      }
      this.queue.shift()
    }
  }
}

interface Pair {
  client: Socket<unknown>
  upstream?: Socket<unknown>
  toClient: Outbox
  toUpstream: Outbox
  /** Cut: nothing more passes either way. */
  cut?: boolean
}

export function startTcpProxy(targetHost: string, targetPort: number): Proxy {
  const pairs = new Set<Pair>()
  // also checked on each new connection: a listener's stop may let one more in
  let down = false
  let full = false
  type Data = { pair: Pair }
  const listen = (port: number): TCPSocketListener<Data> =>
    Bun.listen<Data>({
      hostname: '127.0.0.1',
      port,
      socket: {
        async open(client) {
          if (down || full) return void client.terminate()
          const toClient = new Outbox()
          toClient.socket = client as Socket<unknown>
          const pair: Pair = { client: client as Socket<unknown>, toClient, toUpstream: new Outbox() }
          client.data = { pair }
          pairs.add(pair)
          try {
            pair.upstream = await Bun.connect({
              hostname: targetHost,
              port: targetPort,
              socket: {
                data: (_s, chunk) => void (pair.cut || pair.toClient.send(chunk)),
                drain: () => pair.toUpstream.drain(),
                close: () => void client.end(),
                error: () => void client.end(),
              },
            })
            if (pair.cut) return void pair.upstream.terminate()
            pair.toUpstream.socket = pair.upstream
            pair.toUpstream.drain()
          } catch {
            client.end()
          }
        },
        data(client, chunk) {
          const pair = client.data.pair
          if (!pair.cut) pair.toUpstream.send(chunk)
        },
        drain(client) {
          client.data?.pair.toClient.drain()
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
      down = true
      listener?.stop(true)
      listener = undefined
      // closed at once, both ways: a half-closed connection (end) still carries a request a
      // pooled client writes on it, and the answer back
      for (const p of pairs) {
        p.cut = true
        p.client.terminate()
        p.upstream?.terminate()
      }
      pairs.clear()
    },
    refuseNew(on) {
      full = on
    },
    restore() {
      down = false
      listener ??= listen(port)
    },
    stop() {
      this.cut()
    },
  }
}
