// What each upstream refuses in a request body, as its API documents it and as gateways and
// agents have met it (an Anthropic 400 "text content blocks must contain non-whitespace text",
// an OpenAI 400 on a function name of other characters): one checker per wire, each answering
// the rules a body breaks, named by place. The fake upstream has no rules of its own; a test
// runs a translated body through these to know the real one would take it.
type Json = any

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/
const ANTHROPIC_NAME = /^[a-zA-Z0-9_-]{1,128}$/
const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/
const blocksOf = (m: Json): Json[] => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [])
const thinkingOn = (b: Json) => b.thinking !== undefined && b.thinking.type !== 'disabled'

/** The rules an Anthropic Messages body breaks. */
export function anthropicBreaks(b: Json): string[] {
  const out: string[] = []
  const msgs: Json[] = Array.isArray(b.messages) ? b.messages : []
  if (msgs.length === 0) return ['messages: at least one is required']
  msgs.forEach((m, i) => {
    const at = `messages[${i}]`
    if (m.role !== 'user' && m.role !== 'assistant') out.push(`${at}.role: ${m.role}`)
    if (i > 0 && msgs[i - 1].role === m.role) out.push(`${at}: the same role as the turn before`)
    const blocks = blocksOf(m)
    if (blocks.length === 0 && !(i === msgs.length - 1 && m.role === 'assistant')) out.push(`${at}: no content`)
    const texted = blocks.some((x) => x.type === 'text' && typeof x.text === 'string' && x.text.trim() !== '')
    blocks.forEach((x, k) => {
      const bat = `${at}.content[${k}]`
      if (x.type === 'text' && x.text === '') out.push(`${bat}: empty text`)
      else if (x.type === 'text' && x.text.trim() === '' && !texted) out.push(`${bat}: whitespace only, no other text in the message`)
      if (x.type === 'tool_use') {
        if (m.role !== 'assistant') out.push(`${bat}: tool_use in a user turn`)
        if (!ANTHROPIC_ID.test(x.id)) out.push(`${bat}.id: ${JSON.stringify(x.id)}`)
        if (!ANTHROPIC_NAME.test(x.name)) out.push(`${bat}.name: ${JSON.stringify(x.name)}`)
        if (x.input === null || typeof x.input !== 'object' || Array.isArray(x.input)) out.push(`${bat}.input: not an object`)
        const next = msgs[i + 1]
        if (next && !(next.role === 'user' && blocksOf(next).some((y) => y.type === 'tool_result' && y.tool_use_id === x.id))) out.push(`${bat}: no tool_result for it in the next message`)
      }
      if (x.type === 'tool_result') {
        const prev = msgs[i - 1]
        if (!(prev?.role === 'assistant' && blocksOf(prev).some((y) => y.type === 'tool_use' && y.id === x.tool_use_id))) out.push(`${bat}: answers no tool_use of the message before`)
        if (blocks.slice(0, k).some((y) => y.type !== 'tool_result')) out.push(`${bat}: after other content`)
      }
    })
  })
  const last = msgs.at(-1)
  if (last.role === 'assistant') {
    const end = blocksOf(last).at(-1)
    if (end?.type === 'text' && /\s$/.test(end.text)) out.push('the final assistant content ends in whitespace')
    if (thinkingOn(b)) out.push('a prefill with thinking on')
  }
  // thinking on: a tool loop's last assistant turn begins with its thinking
  const prev = msgs.at(-2)
  if (thinkingOn(b) && last.role === 'user' && prev?.role === 'assistant' && blocksOf(last).some((x) => x.type === 'tool_result')) {
    if (!['thinking', 'redacted_thinking'].includes(blocksOf(prev)[0]?.type)) out.push("thinking on, and the tool loop's last assistant turn does not begin with thinking")
  }
  if (b.thinking?.type === 'enabled' && !(b.thinking.budget_tokens >= 1024 && b.thinking.budget_tokens < b.max_tokens)) out.push(`thinking.budget_tokens: ${b.thinking.budget_tokens} of ${b.max_tokens}`)
  if (thinkingOn(b) && ['any', 'tool'].includes(b.tool_choice?.type)) out.push('a forced tool choice with thinking on')
  for (const [k, x] of (Array.isArray(b.system) ? b.system : []).entries()) if (x.type === 'text' && x.text.trim() === '') out.push(`system[${k}]: empty or whitespace only`)
  for (const s of b.stop_sequences ?? []) if (s.trim() === '') out.push('stop_sequences: one of whitespace only')
  if (b.temperature !== undefined && !(b.temperature >= 0 && b.temperature <= 1)) out.push(`temperature: ${b.temperature}`)
  const names = new Set<string>()
  for (const [k, t] of (b.tools ?? []).entries()) {
    if (names.has(t.name)) out.push(`tools[${k}].name: repeated`)
    names.add(t.name)
    if ((t.type === undefined || t.type === 'custom') && t.input_schema?.type !== 'object') out.push(`tools[${k}].input_schema.type: ${JSON.stringify(t.input_schema?.type)}`)
  }
  if (!(Number.isInteger(b.max_tokens) && b.max_tokens >= 1)) out.push(`max_tokens: ${b.max_tokens}`)
  let breakpoints = 0
  JSON.stringify(b, (k, v) => {
    if (k === 'cache_control' && v) breakpoints++
    return v
  })
  if (breakpoints > 4) out.push(`${breakpoints} cache_control breakpoints (at most 4)`)
  return out
}

/** The rules an OpenAI Chat Completions body breaks. */
export function openaiChatBreaks(b: Json): string[] {
  const out: string[] = []
  const msgs: Json[] = Array.isArray(b.messages) ? b.messages : []
  if (msgs.length === 0) return ['messages: at least one is required']
  let calls = new Set<string>()
  let open = new Set<string>()
  msgs.forEach((m, i) => {
    const at = `messages[${i}]`
    if (m.role === 'tool') {
      if (!calls.has(m.tool_call_id)) out.push(`${at}.tool_call_id: answers no call of the assistant message before`)
      open.delete(m.tool_call_id)
      return
    }
    if (open.size) out.push(`${at}: calls before it unanswered (${[...open].join(', ')})`)
    calls = new Set()
    open = new Set()
    if (!['system', 'developer', 'user', 'assistant'].includes(m.role)) out.push(`${at}.role: ${m.role}`)
    if (m.role !== 'assistant') {
      if (m.content === null || m.content === undefined || (Array.isArray(m.content) && m.content.length === 0)) out.push(`${at}.content: none`)
      return
    }
    const tc: Json[] = m.tool_calls ?? []
    if (Array.isArray(m.tool_calls) && tc.length === 0) out.push(`${at}.tool_calls: empty`)
    if ((m.content === null || m.content === undefined) && tc.length === 0) out.push(`${at}: neither content nor tool_calls`)
    for (const [j, c] of tc.entries()) {
      if (typeof c.id !== 'string' || c.id === '' || c.id.length > 40) out.push(`${at}.tool_calls[${j}].id: ${JSON.stringify(c.id)}`)
      if (!OPENAI_NAME.test(c.function?.name)) out.push(`${at}.tool_calls[${j}].function.name: ${JSON.stringify(c.function?.name)}`)
      if (typeof c.function?.arguments !== 'string') out.push(`${at}.tool_calls[${j}].function.arguments: not a string`)
      calls.add(c.id)
      open.add(c.id)
    }
    for (const p of Array.isArray(m.content) ? m.content : []) if (p.type !== 'text' && p.type !== 'refusal') out.push(`${at}.content: a ${p.type} part`)
  })
  const tools: Json[] = b.tools ?? []
  const names = new Set<string>()
  for (const [k, t] of tools.entries()) {
    const name = t.function?.name ?? t.custom?.name
    if (!OPENAI_NAME.test(name)) out.push(`tools[${k}].name: ${JSON.stringify(name)}`)
    if (names.has(name)) out.push(`tools[${k}].name: repeated`)
    names.add(name)
  }
  if (Array.isArray(b.tools) && tools.length === 0) out.push('tools: empty')
  if (b.tool_choice !== undefined && tools.length === 0) out.push('tool_choice without tools')
  if (b.parallel_tool_calls !== undefined && tools.length === 0) out.push('parallel_tool_calls without tools')
  if (b.tool_choice?.type === 'function' && !names.has(b.tool_choice.function?.name)) out.push('tool_choice names no tool')
  if (Array.isArray(b.stop) && b.stop.length > 4) out.push('stop: more than 4')
  if (b.max_tokens !== undefined && b.max_completion_tokens !== undefined) out.push('max_tokens beside max_completion_tokens')
  if (b.stream_options !== undefined && b.stream !== true) out.push('stream_options without stream')
  if (typeof b.safety_identifier === 'string' && b.safety_identifier.length > 64) out.push('safety_identifier: past 64 characters')
  return out
}

const OUTPUT_AFTER_REASONING = new Set(['function_call', 'custom_tool_call', 'web_search_call', 'reasoning'])

/**
 * The rules an OpenAI Responses body breaks: item ids of each item's own prefix, a call's output
 * after its call where the input is the whole conversation (no previous_response_id), a reasoning
 * item followed by the output it came before, and under `store: false` only with its encrypted
 * content (OpenAI's, `gAAAA…`: it cannot read another provider's), which a reasoning model's
 * reply kept for later must be asked for (`include`); no reasoning asked of a model without it.
 */
export function openaiResponsesBreaks(b: Json): string[] {
  const out: string[] = []
  const input: Json[] = typeof b.input === 'string' ? [{ role: 'user', content: b.input }] : Array.isArray(b.input) ? b.input : []
  const calls = new Set<string>()
  const typeOf = (it: Json) => it?.type ?? (it?.role ? 'message' : undefined)
  input.forEach((it, i) => {
    const at = `input[${i}]`
    const type = typeOf(it)
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(it.role)) out.push(`${at}.role: ${it.role}`)
      if (it.id !== undefined && !String(it.id).startsWith('msg')) out.push(`${at}.id: ${it.id}`)
      if (Array.isArray(it.content) && it.content.length === 0) out.push(`${at}.content: empty`)
      for (const p of Array.isArray(it.content) ? it.content : []) {
        const allowed = it.role === 'assistant' ? ['output_text', 'refusal'] : ['input_text', 'input_image', 'input_file', 'input_audio']
        if (!allowed.includes(p.type)) out.push(`${at}: a ${p.type} part in a ${it.role} message`)
      }
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      if (it.id !== undefined && !String(it.id).startsWith(type === 'function_call' ? 'fc' : 'ctc')) out.push(`${at}.id: ${it.id}`)
      if (!OPENAI_NAME.test(it.name)) out.push(`${at}.name: ${JSON.stringify(it.name)}`)
      calls.add(it.call_id)
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      if (b.previous_response_id === undefined && !calls.has(it.call_id)) out.push(`${at}: answers no call before it`)
    } else if (type === 'reasoning') {
      if (!Array.isArray(it.summary)) out.push(`${at}.summary: none`)
      if (it.id !== undefined && !String(it.id).startsWith('rs_')) out.push(`${at}.id: ${it.id}`)
      if (b.store === false && typeof it.encrypted_content !== 'string') out.push(`${at}: no encrypted_content under store: false`)
      if (typeof it.encrypted_content === 'string' && !it.encrypted_content.startsWith('gAAAA')) out.push(`${at}.encrypted_content: not OpenAI's`)
      const next = input[i + 1]
      if (!(OUTPUT_AFTER_REASONING.has(typeOf(next)) || (typeOf(next) === 'message' && next.role === 'assistant'))) out.push(`${at}: not followed by its output`)
    }
  })
  const names = new Set<string>()
  for (const [k, t] of (b.tools ?? []).entries()) {
    if (t.type !== 'function' && t.type !== 'custom') continue
    if (!OPENAI_NAME.test(t.name)) out.push(`tools[${k}].name: ${JSON.stringify(t.name)}`)
    if (names.has(t.name)) out.push(`tools[${k}].name: repeated`)
    names.add(t.name)
  }
  if (b.tool_choice !== undefined && !(b.tools ?? []).length) out.push('tool_choice without tools')
  const reasons = /^(o\d|gpt-5)/.test(b.model)
  if (!reasons && b.reasoning !== undefined) out.push(`reasoning: ${b.model} does not reason`)
  if (reasons && b.store === false && !(b.include ?? []).includes('reasoning.encrypted_content')) out.push('store: false without include reasoning.encrypted_content: the reasoning cannot come back')
  return out
}
