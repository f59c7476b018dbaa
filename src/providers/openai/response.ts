// chat.completion JSON → IR GenerationResponse (pure).
import type { GenerationResponse, Part } from '../../ir/types.ts'
import { argumentsOf, reasoningOf, stringOf, textOf, type ChatMessageFields } from './compat-fields.ts'
import { calledFinish, finishFromOpenAI, refusedFinish } from './finish.ts'
import { usageFromOpenAI, type OpenAIUsage } from './usage.ts'

interface ChatToolCall {
  id?: unknown
  function?: { name?: unknown; arguments?: unknown }
}

export interface ChatCompletion {
  id?: string
  model?: string
  created?: number
  choices?: {
    finish_reason?: string | null
    message?: ChatMessageFields
  }[]
  usage?: OpenAIUsage | null
  system_fingerprint?: string | null
  service_tier?: string | null
}

/** `tiers`: as openAIChatEvents'. */
export function fromOpenAIChat(body: ChatCompletion, tiers = false): GenerationResponse {
  const choice = body.choices?.[0]
  const msg = choice?.message ?? {}
  const content: Part[] = []
  const reasoning = reasoningOf(msg)
  if (reasoning) content.push({ type: 'reasoning', text: reasoning })
  const text = textOf(msg.content)
  const refusal = textOf(msg.refusal)
  if (text) content.push({ type: 'text', text })
  // A refusal is what the model said instead of an answer; keep it as the text the user sees.
  else if (refusal) content.push({ type: 'text', text: refusal })
  const calls = Array.isArray(msg.tool_calls) ? (msg.tool_calls as ChatToolCall[]) : []
  for (const c of calls) {
    if (!c || typeof c !== 'object') continue
    content.push({ type: 'tool-call', id: stringOf(c.id), name: stringOf(c.function?.name), arguments: argumentsOf(c.function?.arguments) || '{}' })
  }
  if (msg.function_call && typeof msg.function_call === 'object') {
    content.push({ type: 'tool-call', id: `call_${body.id ?? 'legacy'}`, name: stringOf(msg.function_call.name), arguments: argumentsOf(msg.function_call.arguments) || '{}' })
  }
  const called = content.some((p) => p.type === 'tool-call')
  const providerData: Record<string, unknown> = {}
  if (body.system_fingerprint) providerData.system_fingerprint = body.system_fingerprint
  if (body.service_tier) providerData.service_tier = body.service_tier
  return {
    id: body.id ?? '',
    model: body.model ?? '',
    created: body.created ?? Math.floor(Date.now() / 1000),
    content,
    finish: calledFinish(refusedFinish(finishFromOpenAI(choice?.finish_reason), !text && !!refusal), called),
    usage: usageFromOpenAI(body.usage, tiers ? body.service_tier : undefined),
    ...(Object.keys(providerData).length ? { providerData: { openai: providerData } } : {}),
  }
}
