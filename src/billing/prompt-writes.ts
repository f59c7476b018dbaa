// At what price a request's prompt can be billed: as input, or written to Claude's prompt cache,
// which costs more (1.25× input for a 5-minute entry, 2× for an hour's). Anthropic writes only
// at a breakpoint the request sets: `cache_control` on a system block, a tool, a message's content
// block, or at the top level of the body (automatic caching: Anthropic puts it on the last block),
// its `ttl` "5m" (the default) or "1h". The chat and responses surfaces carry breakpoints to a
// Claude model too: `cache_control` on a chat content part or at chat's top level, as it came,
// and OpenAI's `prompt_cache_breakpoint` on a part, which becomes Anthropic's default entry
// (openai-options.ts). Nothing else a request says (`prompt_cache_key`, `prompt_cache_retention`)
// reaches Anthropic. Pure: the prompt's walk (prompt-bound.ts) reads each breakpoint it passes.

/** The dearest price a request's prompt can take: input alone, a 5-minute cache write, or an hour's. */
export type PromptWrites = 'none' | '5m' | '1h'

const RANK: Record<PromptWrites, number> = { none: 0, '5m': 1, '1h': 2 }

export const dearerWrites = (a: PromptWrites, b: PromptWrites): PromptWrites => (RANK[b] > RANK[a] ? b : a)

/**
 * What the breakpoints on one object of a request (a block, a part, a tool, the body) can incur.
 * A `cache_control` is a 5-minute write when it names no ttl or "5m", and held as an hour's
 * otherwise: "1h", or a value Anthropic would refuse (a refused request costs nothing, but the
 * hold is never below what the record charges). OpenAI's breakpoint, an object, becomes a
 * 5-minute one; anything else is OpenAI's to judge and writes nothing on Claude.
 */
export function breakpointWrites(o: { cache_control?: unknown; prompt_cache_breakpoint?: unknown }): PromptWrites {
  const openai: PromptWrites = typeof o.prompt_cache_breakpoint === 'object' && o.prompt_cache_breakpoint !== null ? '5m' : 'none'
  const cc = o.cache_control
  if (cc === undefined || cc === null) return openai
  const ttl = typeof cc === 'object' && !Array.isArray(cc) ? (cc as { ttl?: unknown }).ttl : '?'
  return ttl === undefined || ttl === '5m' ? '5m' : '1h'
}
