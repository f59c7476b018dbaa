// Anthropic usage → IR buckets. Anthropic's input_tokens already excludes cache reads and
// writes, so the buckets map one to one.
import type { Usage } from '../../ir/types.ts'

export interface AnthropicUsage {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
}

export function usageFromAnthropic(u: AnthropicUsage | null | undefined): Usage {
  return {
    inputTokens: u?.input_tokens ?? 0,
    outputTokens: u?.output_tokens ?? 0,
    cacheReadTokens: u?.cache_read_input_tokens ?? 0,
    cacheWriteTokens: u?.cache_creation_input_tokens ?? 0,
  }
}

/**
 * message_delta usage is cumulative and may carry only some fields: the
 * fields it has replace the running ones; nothing is ever added.
 */
export function overwriteUsage(running: Usage, u: AnthropicUsage | null | undefined): Usage {
  if (!u) return running
  return {
    inputTokens: u.input_tokens ?? running.inputTokens,
    outputTokens: u.output_tokens ?? running.outputTokens,
    cacheReadTokens: u.cache_read_input_tokens ?? running.cacheReadTokens,
    cacheWriteTokens: u.cache_creation_input_tokens ?? running.cacheWriteTokens,
  }
}
