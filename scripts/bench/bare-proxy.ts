// The reference point: a bare Elysia pass-through proxy (no auth, limits, validation or
// recording) on the gateway's core, measured in the same run, so the tables show how much
// of the added latency is the gateway and how much is the machine's two-hop floor.
//   UPSTREAM=<url> bun scripts/bench/bare-proxy.ts   → prints `bare proxy listening on <url>`
import { Elysia } from 'elysia'

const upstream = process.env.UPSTREAM
if (!upstream) throw new Error('UPSTREAM is not set')

const app = new Elysia()
  .post('/api/alpha/v1/chat/completions', async ({ request }) =>
    fetch(upstream + '/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-upstream' },
      body: await request.text(),
      signal: request.signal,
    }),
  )
  .post('/api/alpha/v1/responses', async ({ request }) =>
    fetch(upstream + '/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-upstream' },
      body: await request.text(),
      signal: request.signal,
    }),
  )
  .post('/api/beta/v1/messages', async ({ request }) =>
    fetch(upstream + '/v1/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-bench-upstream', 'anthropic-version': '2023-06-01' },
      body: await request.text(),
      signal: request.signal,
    }),
  )

const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req) => app.handle(req) })
console.log(`bare proxy listening on http://127.0.0.1:${server.port}`)
