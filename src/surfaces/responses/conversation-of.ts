// The conversation a stored responses turn continues by its name (a `conv_` id or a name of the
// client's own), read from the raw body: such turns take one at a time, each from the turn
// before it. One that names a previous_response_id as well is refused later (validate.ts), and
// one with `store: false` adds nothing to it, so neither holds it.
export function conversationOf(raw: unknown): string | undefined {
  const b = raw as { conversation?: unknown; previous_response_id?: unknown; store?: unknown } | null
  if (!b || typeof b !== 'object' || b.previous_response_id !== undefined || b.store === false) return undefined
  const c = b.conversation
  const name = typeof c === 'string' ? c : c && typeof c === 'object' ? (c as { id?: unknown }).id : undefined
  return typeof name === 'string' ? name : undefined
}
