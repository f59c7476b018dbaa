// Messages JSON → IR GenerationResponse (pure).
import type { GenerationResponse, Part } from '../../ir/types.ts'
import { finishFromAnthropic } from './finish.ts'
import { usageFromAnthropic, type AnthropicUsage } from './usage.ts'

export interface AnthropicBlock {
  type: string
  text?: string
  thinking?: string
  signature?: string
  data?: string
  id?: string
  name?: string
  input?: unknown
}

export interface AnthropicMessage {
  id?: string
  model?: string
  content?: AnthropicBlock[]
  stop_reason?: string | null
  stop_sequence?: string | null
  usage?: AnthropicUsage
}

/**
 * One content block → IR part. Server-side tool blocks (`server_tool_use`, `*_tool_result`)
 * were executed by Anthropic and are not calls for the client to run, so they yield nothing.
 */
export function partFromBlock(b: AnthropicBlock): Part | undefined {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text ?? '' }
    case 'thinking':
      return b.signature !== undefined ? { type: 'reasoning', text: b.thinking ?? '', signature: b.signature } : { type: 'reasoning', text: b.thinking ?? '' }
    case 'redacted_thinking':
      return { type: 'reasoning', text: '', redacted: b.data ?? '' }
    case 'tool_use':
      return { type: 'tool-call', id: b.id ?? '', name: b.name ?? '', arguments: JSON.stringify(b.input ?? {}) }
    default:
      return undefined
  }
}

export function fromAnthropicMessage(body: AnthropicMessage): GenerationResponse {
  const content = (body.content ?? []).map(partFromBlock).filter((p): p is Part => p !== undefined)
  return {
    id: body.id ?? '',
    model: body.model ?? '',
    created: Math.floor(Date.now() / 1000),
    content,
    finish: finishFromAnthropic(body.stop_reason, body.stop_sequence),
    usage: usageFromAnthropic(body.usage),
  }
}
