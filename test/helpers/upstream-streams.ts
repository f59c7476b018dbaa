// A whole reply as its upstream streams it, for fake upstreams that make their replies up: an
// Anthropic Message as Anthropic's events (text and thinking a character a delta, a tool's input
// in pieces of three characters, citations after their text, blocks of no deltas whole in their
// start), and an OpenAI Response as the Responses API's events (text a character a delta, a
// call's arguments in one delta, reasoning summaries as their parts). The streamed reply is the
// whole one, so a test may compare what a client makes of each.
type Json = any

export function messagesStream(m: Json): string {
  const ev = (name: string, data: Json) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`
  let out = ev('message_start', { message: { ...m, content: [], stop_reason: null, stop_sequence: null, usage: { ...m.usage, output_tokens: 1 } } })
  m.content.forEach((b: Json, index: number) => {
    const delta = (d: Json) => (out += ev('content_block_delta', { index, delta: d }))
    if (b.type === 'text' || b.type === 'thinking') {
      out += ev('content_block_start', { index, content_block: b.type === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' } })
      for (const piece of b[b.type]) delta({ type: `${b.type}_delta`, [b.type]: piece })
      for (const citation of b.citations ?? []) delta({ type: 'citations_delta', citation })
      if (b.signature) delta({ type: 'signature_delta', signature: b.signature })
    } else if (b.type === 'tool_use' || b.type === 'server_tool_use') {
      out += ev('content_block_start', { index, content_block: { ...b, input: {} } })
      const s = JSON.stringify(b.input)
      for (let i = 0; i < s.length; i += 3) delta({ type: 'input_json_delta', partial_json: s.slice(i, i + 3) })
    } else out += ev('content_block_start', { index, content_block: b })
    out += ev('content_block_stop', { index })
  })
  out += ev('message_delta', { delta: { stop_reason: m.stop_reason, stop_sequence: m.stop_sequence }, usage: m.usage })
  return out + ev('message_stop', {})
}

export function responsesStream(r: Json): string {
  let seq = 0
  const ev = (type: string, o: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...o })}\n\n`
  let out = ev('response.created', { response: { ...r, status: 'in_progress', output: [], usage: null } })
  r.output.forEach((it: Json, i: number) => {
    const at = { item_id: it.id, output_index: i }
    if (it.type === 'message') {
      out += ev('response.output_item.added', { output_index: i, item: { ...it, status: 'in_progress', content: [] } })
      it.content.forEach((part: Json, j: number) => {
        out += ev('response.content_part.added', { ...at, content_index: j, part: { ...part, text: '' } })
        for (const piece of part.text) out += ev('response.output_text.delta', { ...at, content_index: j, delta: piece, logprobs: [] })
        out += ev('response.output_text.done', { ...at, content_index: j, text: part.text, logprobs: [] })
        out += ev('response.content_part.done', { ...at, content_index: j, part })
      })
    } else if (it.type === 'function_call') {
      out += ev('response.output_item.added', { output_index: i, item: { ...it, status: 'in_progress', arguments: '' } })
      out += ev('response.function_call_arguments.delta', { ...at, delta: it.arguments })
      out += ev('response.function_call_arguments.done', { ...at, arguments: it.arguments, name: it.name })
    } else if (it.type === 'reasoning') {
      out += ev('response.output_item.added', { output_index: i, item: { ...it, summary: [] } })
      it.summary.forEach((part: Json, j: number) => {
        out += ev('response.reasoning_summary_part.added', { ...at, summary_index: j, part: { type: 'summary_text', text: '' } })
        out += ev('response.reasoning_summary_text.delta', { ...at, summary_index: j, delta: part.text })
        out += ev('response.reasoning_summary_text.done', { ...at, summary_index: j, text: part.text })
        out += ev('response.reasoning_summary_part.done', { ...at, summary_index: j, part })
      })
    } else out += ev('response.output_item.added', { output_index: i, item: it })
    out += ev('response.output_item.done', { output_index: i, item: it })
  })
  return out + ev(r.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: r })
}
