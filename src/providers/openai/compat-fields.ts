// What servers of the chat wire put where OpenAI puts a string: reasoning under `reasoning`
// (vLLM, which renamed `reasoning_content`, and OpenRouter), content as a list of text parts
// (Mistral's), tool arguments as a JSON object. Read here as OpenAI's strings, so that none is
// lost, and none reaches code that expects text as something else.

type Obj = Record<string, unknown>

/** A message's or a delta's fields as servers of the wire send them: strings from OpenAI, what this file reads from others. */
export interface ChatMessageFields {
  content?: unknown
  refusal?: unknown
  reasoning_content?: unknown
  /** vLLM's and OpenRouter's name for reasoning_content. */
  reasoning?: unknown
  tool_calls?: unknown
  function_call?: { name?: unknown; arguments?: unknown } | null
}

/** A string as it is; a list of parts as their texts joined; anything else as no text. */
export function textOf(v: unknown): string {
  if (typeof v === 'string') return v
  if (!Array.isArray(v)) return ''
  let out = ''
  for (const p of v) {
    if (typeof p === 'string') out += p
    else if (typeof (p as Obj)?.text === 'string') out += (p as Obj).text as string
  }
  return out
}

/** A message's or delta's reasoning text: `reasoning_content`, else `reasoning` (a server may send both, alike). */
export function reasoningOf(m: ChatMessageFields): string {
  return textOf(m.reasoning_content) || textOf(m.reasoning)
}

/** Tool arguments as text: a string as it is, an object as its JSON; undefined for none. */
export function argumentsOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v
  return v !== null && typeof v === 'object' ? JSON.stringify(v) : undefined
}

/** A name or id as text ('' for anything else). */
export const stringOf = (v: unknown): string => (typeof v === 'string' ? v : '')

/**
 * What a message or a delta wrote, piece by piece, each non-empty piece to `push`: reasoning,
 * text, a refusal, each call's name and arguments (a custom tool's input; the legacy
 * `function_call`). True when it holds a call.
 */
export function writtenBy(m: unknown, push: (text: string) => void): boolean {
  if (!m || typeof m !== 'object') return false
  const f = m as ChatMessageFields
  for (const text of [reasoningOf(f), textOf(f.content), textOf(f.refusal)]) if (text !== '') push(text)
  const calls = Array.isArray(f.tool_calls) ? (f.tool_calls as Obj[]) : []
  const legacy: Obj[] = f.function_call && typeof f.function_call === 'object' ? [{ function: f.function_call }] : []
  for (const t of [...calls, ...legacy]) {
    const fn = t?.function as Obj | undefined
    const custom = t?.custom as Obj | undefined
    // a custom tool's call carries its input as it is
    for (const text of [stringOf(fn?.name), argumentsOf(fn?.arguments) ?? '', stringOf(custom?.name), stringOf(custom?.input)]) if (text !== '') push(text)
  }
  return calls.length + legacy.length > 0
}
