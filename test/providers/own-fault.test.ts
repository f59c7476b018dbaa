// A failure of the gateway's own code while it reads a 2xx reply is not the network's: the
// upstream made that reply and bills it, so it is not sent again, and nothing says the upstream
// could not be reached. Taken for a connection error, it was retried (another reply made and
// billed, up to max_retries times) and answered "could not reach upstream". A network failure
// mid-body (Bun's TypeError with a code, ECONNRESET) is still retried.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { callUpstream } from '../../src/providers/http.ts'
import { UpstreamError } from '../../src/ir/errors.ts'
import type { ProviderConfig } from '../../src/config/providers.ts'

let calls = 0
let server: ReturnType<typeof Bun.serve>
beforeAll(() => {
  server = Bun.serve({ port: 0, fetch: () => (calls++, Response.json({ id: 'x', usage: 5 })) })
})
afterAll(() => server.stop(true))

const provider = (): ProviderConfig => ({ id: 'up', name: 'up', kind: 'openai', baseUrl: `http://127.0.0.1:${server.port}`, apiKeys: [], responses: false, timeoutMs: 5_000, maxRetries: 2 })

async function call(accept: (res: Response) => Promise<unknown>): Promise<unknown> {
  calls = 0
  return callUpstream({ provider: provider(), path: '/v1/chat/completions', headers: {}, body: '{}', signal: new AbortController().signal, accept }).catch((e) => e)
}

describe('a failure while the reply is read', () => {
  test("the gateway's own (a TypeError with no code): one call, a 502 that says so, not retryable", async () => {
    const e = await call(async (res) => {
      const j = (await res.json()) as { usage: unknown }
      return 'speed' in (j.usage as object)
    })
    expect(calls).toBe(1)
    expect(e).toBeInstanceOf(UpstreamError)
    expect((e as UpstreamError).status).toBe(502)
    expect((e as UpstreamError).retryable).toBe(false)
    expect((e as UpstreamError).message).not.toContain('could not reach')
  })

  test("the network's (a TypeError with a code): retried, as before", async () => {
    const e = await call(async (res) => {
      await res.arrayBuffer()
      throw Object.assign(new TypeError('The socket connection was closed unexpectedly'), { code: 'ECONNRESET' })
    })
    expect(calls).toBe(3)
    expect((e as UpstreamError).message).toContain('could not reach upstream up (ECONNRESET)')
  })
})
