// A fake upstream for concurrent-calls.ts: every chat completion is held open until
// POST /release, so the calls in flight at once are exactly those the gateway has let through.
// It answers GET /count with `{open, peak}`.
let holding = 0
let peak = 0
let free!: () => void
const freed = new Promise<void>((r) => (free = r))
const body = JSON.stringify({
  id: 'chatcmpl-held',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
})
const server = Bun.serve({
  port: 0,
  idleTimeout: 0,
  async fetch(req) {
    const path = new URL(req.url).pathname
    if (path === '/count') return Response.json({ open: holding, peak })
    if (path === '/release') {
      free()
      return new Response('ok')
    }
    await req.arrayBuffer()
    holding++
    peak = Math.max(peak, holding)
    await freed
    holding--
    return new Response(body, { headers: { 'content-type': 'application/json' } })
  },
})
console.log(`listening on ${server.url.origin}`)
