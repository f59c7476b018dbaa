// A scripted Anthropic upstream for scripts/clients/claude-code.sh: a streamed tool_use of
// Bash (`echo sy-ok`) first, then, once the request carries a tool_result, a streamed text
// that quotes it — the shape of a real Claude model's tool round trip. Prints its URL.
const sse = (events: [string, object][]) => events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify({ type: e, ...d })}\n\n`).join('')

function reply(body: any): string {
  const id = `msg_fake_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`
  const start: [string, object] = ['message_start', { message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } }]
  const last = body.messages?.at(-1)
  const result = Array.isArray(last?.content) ? last.content.find((b: any) => b.type === 'tool_result') : undefined
  if (result) {
    const text = typeof result.content === 'string' ? result.content : (result.content ?? []).map((c: any) => c.text ?? '').join('')
    return sse([
      start,
      ['content_block_start', { index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { index: 0, delta: { type: 'text_delta', text: `tool result: ${text.trim()}` } }],
      ['content_block_stop', { index: 0 }],
      ['message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }],
      ['message_stop', {}],
    ])
  }
  return sse([
    start,
    ['content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_fake_01', name: 'Bash', input: {} } }],
    ['content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"command": "echo sy-ok", ' } }],
    ['content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '"description": "echo"}' } }],
    ['content_block_stop', { index: 0 }],
    ['message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 30 } }],
    ['message_stop', {}],
  ])
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const path = new URL(req.url).pathname
    if (req.method !== 'POST') return new Response('{}', { status: 404 })
    const body = await req.json()
    if (path === '/v1/messages/count_tokens') return Response.json({ input_tokens: 100 })
    if (path !== '/v1/messages') return Response.json({ type: 'error', error: { type: 'not_found_error', message: path } }, { status: 404 })
    return new Response(reply(body), { headers: { 'content-type': 'text/event-stream' } })
  },
})
console.log(`fake anthropic listening on http://127.0.0.1:${server.port}`)
