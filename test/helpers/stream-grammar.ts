// What a client's stream must be, for each surface: its events in their wire's order, and what
// they add up to equal to what the upstream said (its text, and its calls in order with their
// arguments). Each checker answers the rules a stream breaks. Used with streams made at random
// (test/pipeline/stream-grammar.test.ts).
type Json = any

/** What the upstream said: its text pieces joined, its calls in order, how it finished. */
export interface Said {
  text: string
  calls: { name: string; args: string }[]
  finish: 'stop' | 'tool' | 'length'
}

function sseEvents(text: string): { event?: string; data: string }[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim() !== '')
    .map((b) => {
      const lines = b.split('\n')
      return { event: lines.find((l) => l.startsWith('event: '))?.slice(7), data: lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n') }
    })
}

/** Calls as `name {json}`, their arguments read as JSON (the gateway may send `{}` for none). */
const callsOf = (calls: { name?: string; args: string }[]) => calls.map((c) => `${c.name} ${JSON.stringify(JSON.parse(c.args.trim() === '' ? '{}' : c.args))}`).join(' | ')
const sameCalls = (got: { name?: string; args: string }[], said: Said) => {
  try {
    return callsOf(got) === callsOf(said.calls) ? [] : [`calls ${callsOf(got)} (said ${callsOf(said.calls)})`]
  } catch (e) {
    return [`call arguments that are not JSON: ${(e as Error).message}`]
  }
}
const sameText = (got: string, said: Said) => (got === said.text ? [] : [`text ${JSON.stringify(got)} (said ${JSON.stringify(said.text)})`])

/** An Anthropic Messages stream. */
export function messagesStreamBreaks(body: string, said: Said): string[] {
  const out: string[] = []
  const evs = sseEvents(body).map((e) => ({ name: e.event, d: JSON.parse(e.data) as Json }))
  if (evs[0]?.name !== 'message_start') out.push(`first event ${evs[0]?.name}`)
  if (evs.at(-1)?.name !== 'message_stop') out.push(`last event ${evs.at(-1)?.name}`)
  let open = -1
  const blocks: { type: string; text: string; json: string; name?: string }[] = []
  for (const { name, d } of evs) {
    if (name !== d.type) out.push(`event ${name} holding ${d.type}`)
    if (name === 'content_block_start') {
      if (open !== -1) out.push(`block ${d.index} starts while ${open} is open`)
      if (d.index !== blocks.length) out.push(`block index ${d.index} where ${blocks.length} comes next`)
      open = d.index
      blocks.push({ type: d.content_block.type, text: '', json: '', name: d.content_block.name })
    } else if (name === 'content_block_delta') {
      const b = blocks[d.index]
      if (d.index !== open || !b) out.push(`a delta of block ${d.index} while ${open} is open`)
      else if (d.delta.type === 'text_delta' && b.type === 'text') b.text += d.delta.text
      else if (d.delta.type === 'input_json_delta' && b.type === 'tool_use') b.json += d.delta.partial_json
      else if (!['thinking_delta', 'signature_delta'].includes(d.delta.type) || b.type !== 'thinking') out.push(`a ${d.delta.type} in a ${b.type} block`)
    } else if (name === 'content_block_stop') {
      if (d.index !== open) out.push(`block ${d.index} stops while ${open} is open`)
      open = -1
    } else if (name === 'message_delta') {
      if (open !== -1) out.push('message_delta with a block open')
      const want = { tool: 'tool_use', length: 'max_tokens', stop: 'end_turn' }[said.finish]
      if (d.delta.stop_reason !== want) out.push(`stop_reason ${d.delta.stop_reason} (said ${want})`)
    }
  }
  out.push(...sameText(blocks.filter((b) => b.type === 'text').map((b) => b.text).join(''), said))
  out.push(...sameCalls(blocks.filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, args: b.json })), said))
  return out
}

/** A Chat Completions stream asked with `stream_options.include_usage`. */
export function chatStreamBreaks(body: string, said: Said): string[] {
  const out: string[] = []
  const evs = sseEvents(body)
  if (evs.at(-1)?.data !== '[DONE]') out.push('no [DONE] at the end')
  const chunks: Json[] = evs.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data))
  if (new Set(chunks.map((c) => c.id)).size !== 1) out.push('chunks of more than one id')
  let text = ''
  let finishes: string[] = []
  const calls: { id?: string; name?: string; args: string }[] = []
  for (const c of chunks) {
    if (c.object !== 'chat.completion.chunk') out.push(`object ${c.object}`)
    for (const ch of c.choices ?? []) {
      if (ch.finish_reason) finishes.push(ch.finish_reason)
      if (typeof ch.delta?.content === 'string') text += ch.delta.content
      for (const tc of ch.delta?.tool_calls ?? []) {
        const call = (calls[tc.index] ??= { args: '' })
        if (tc.id !== undefined) {
          if (call.id !== undefined) out.push(`call ${tc.index}: its id twice`)
          call.id = tc.id
        }
        if (tc.function?.name !== undefined) call.name = (call.name ?? '') + tc.function.name
        if (call.id === undefined) out.push(`call ${tc.index}: a piece before its id`)
        call.args += tc.function?.arguments ?? ''
      }
    }
  }
  const usage = chunks.filter((c) => c.usage)
  if (usage.length !== 1 || usage[0] !== chunks.at(-1)) out.push(`${usage.length} usage chunks, or one not last`)
  const want = { tool: 'tool_calls', length: 'length', stop: 'stop' }[said.finish]
  if (finishes.join() !== want) out.push(`finish reasons ${finishes.join()} (said ${want})`)
  return [...out, ...sameText(text, said), ...sameCalls(calls, said)]
}

/** A Responses stream. */
export function responsesStreamBreaks(body: string, said: Said): string[] {
  const out: string[] = []
  const evs = sseEvents(body).map((e) => ({ name: e.event, d: JSON.parse(e.data) as Json }))
  evs.forEach(({ name, d }, i) => {
    if (d.sequence_number !== i) out.push(`sequence_number ${d.sequence_number} at event ${i}`)
    if (name !== d.type) out.push(`event ${name} holding ${d.type}`)
  })
  if (evs[0]?.name !== 'response.created') out.push(`first event ${evs[0]?.name}`)
  const want = said.finish === 'length' ? 'response.incomplete' : 'response.completed'
  if (evs.at(-1)?.name !== want) out.push(`last event ${evs.at(-1)?.name} (said ${want})`)
  const items = new Map<number, Json>()
  const deltas = new Map<string, string>()
  for (const { name, d } of evs) {
    if (name === 'response.output_item.added') {
      if (items.has(d.output_index)) out.push(`item ${d.output_index} added twice`)
      items.set(d.output_index, d.item)
    } else if (name === 'response.output_item.done') {
      if (items.get(d.output_index)?.id !== d.item.id) out.push(`item ${d.output_index} done, not added under its id`)
      items.set(d.output_index, d.item)
    } else if (name === 'response.output_text.delta' || name === 'response.function_call_arguments.delta') {
      const key = `${name}:${d.item_id}:${d.content_index ?? ''}`
      deltas.set(key, (deltas.get(key) ?? '') + d.delta)
    } else if (name === 'response.output_text.done' && (deltas.get(`response.output_text.delta:${d.item_id}:${d.content_index}`) ?? '') !== d.text) {
      out.push(`output_text.done of ${d.item_id} is not its deltas`)
    } else if (name === 'response.function_call_arguments.done' && (deltas.get(`response.function_call_arguments.delta:${d.item_id}:`) ?? '') !== d.arguments) {
      out.push(`function_call_arguments.done of ${d.item_id} is not its deltas`)
    }
  }
  const done = [...items.entries()].sort((a, b) => a[0] - b[0]).map(([, it]) => it)
  if (JSON.stringify(evs.at(-1)?.d.response?.output) !== JSON.stringify(done)) out.push("the last event's output is not the items done")
  const text = done.filter((it) => it.type === 'message').flatMap((it) => it.content.map((c: Json) => c.text ?? '')).join('')
  return [...out, ...sameText(text, said), ...sameCalls(done.filter((it) => it.type === 'function_call').map((it) => ({ name: it.name, args: it.arguments })), said)]
}
