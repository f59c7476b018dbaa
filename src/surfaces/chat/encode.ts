// IR → chat-style wire: the finish-reason table, usage, and the chat.completion reply.
import type { Finish, FinishReason, GenerationResponse, UrlCitation, Usage } from '../../ir/types.ts'
import { promptTokens } from '../../ir/types.ts'
import { customInputOf } from '../custom-tools.ts'

/**
 * IR finish reason → chat `finish_reason`. The chat wire knows only stop, length,
 * tool_calls, content_filter (and legacy function_call), so:
 * - `refusal` (Anthropic's safety stop) → `content_filter`: the output was withheld
 *   for policy reasons, which is what content_filter tells a chat client.
 * - `pause` (Anthropic pause_turn) and `context_exceeded` → `length`: the turn is
 *   incomplete and may be continued, never a silent "done".
 * - `other` carries the provider's raw reason rather than pretending it was `stop`.
 */
const FINISH: Record<FinishReason, string | null> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
  refusal: 'content_filter',
  pause: 'length',
  context_exceeded: 'length',
  error: 'error',
  other: null,
}

export function chatFinishReason(f: Finish): string {
  return FINISH[f.reason] ?? f.raw ?? 'stop'
}

export interface ChatUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number }
  completion_tokens_details?: { reasoning_tokens: number }
}

/** `prompt_tokens` counts cache reads and writes too; cached_tokens = reads, cache_write_tokens (where there were any) = writes. */
export function chatUsage(u: Usage): ChatUsage {
  const prompt = promptTokens(u)
  const out: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: u.outputTokens,
    total_tokens: prompt + u.outputTokens,
    prompt_tokens_details: u.cacheWriteTokens > 0 ? { cached_tokens: u.cacheReadTokens, cache_write_tokens: u.cacheWriteTokens } : { cached_tokens: u.cacheReadTokens },
  }
  if (u.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: u.reasoningTokens }
  return out
}

export type ChatToolCall =
  | { id: string; type: 'function'; function: { name: string; arguments: string } }
  | { id: string; type: 'custom'; custom: { name: string; input: string } }

const NO_CUSTOM_TOOLS: ReadonlySet<string> = new Set()

export interface ChatAnnotation {
  type: 'url_citation'
  url_citation: { start_index: number; end_index: number; url: string; title: string }
}

/** A cited source as OpenAI's search models show one on a chat message (`offset`: where the part's text begins in the message). */
export function chatAnnotation(c: UrlCitation, offset = 0): ChatAnnotation {
  return { type: 'url_citation', url_citation: { start_index: offset + c.start, end_index: offset + c.end, url: c.url, title: c.title ?? '' } }
}

/** A Claude thinking block as a chat reply carries it (LiteLLM's `thinking_blocks`). */
export type ChatThinkingBlock = { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string }

/**
 * The chat.completion reply. Reasoning has no place in OpenAI's chat wire; it goes as the
 * fields other gateways give it: its text as `reasoning_content`, a Claude model's signed
 * blocks as `thinking_blocks` (sent back on the assistant message, they let the next turn of a
 * tool loop think). Text parts are joined in order. A call of one of `customTools` goes out as
 * a custom tool call, its input unwrapped.
 */
export function encodeChatResponse(r: GenerationResponse, model: string, customTools = NO_CUSTOM_TOOLS): Record<string, unknown> {
  let text: string | null = null
  let reasoning: string | undefined
  const blocks: ChatThinkingBlock[] = []
  const toolCalls: ChatToolCall[] = []
  const annotations: ChatAnnotation[] = []
  for (const p of r.content) {
    if (p.type === 'text') {
      for (const c of p.citations ?? []) annotations.push(chatAnnotation(c, text?.length ?? 0))
      text = (text ?? '') + p.text
    }
    else if (p.type === 'reasoning') {
      if (p.text !== '') reasoning = (reasoning ?? '') + p.text
      if (p.signature !== undefined) blocks.push({ type: 'thinking', thinking: p.text, signature: p.signature })
      else if (p.redacted !== undefined) blocks.push({ type: 'redacted_thinking', data: p.redacted })
    } else if (p.type !== 'tool-call') continue
    else if (customTools.has(p.name)) toolCalls.push({ id: p.id, type: 'custom', custom: { name: p.name, input: customInputOf(p.arguments) } })
    else toolCalls.push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments || '{}' } })
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text, refusal: null }
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  if (annotations.length > 0) message.annotations = annotations
  if (reasoning !== undefined) message.reasoning_content = reasoning
  if (blocks.length > 0) message.thinking_blocks = blocks
  return {
    id: r.id,
    object: 'chat.completion',
    created: r.created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: chatFinishReason(r.finish) }],
    usage: chatUsage(r.usage),
  }
}
