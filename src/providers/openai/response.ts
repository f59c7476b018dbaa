// chat.completion JSON → IR GenerationResponse (pure).
import type { GenerationResponse, Part } from '../../ir/types.ts'
import { finishFromOpenAI, refusedFinish } from './finish.ts'
import { usageFromOpenAI, type OpenAIUsage } from './usage.ts'

interface ChatToolCall {
  id?: string
  function?: { name?: string; arguments?: string }
}

export interface ChatCompletion {
  id?: string
  model?: string
  created?: number
  choices?: {
    finish_reason?: string | null
    message?: {
      content?: string | null
      refusal?: string | null
      /** Sent by OpenAI-compatible upstreams that expose reasoning text. */
      reasoning_content?: string | null
      tool_calls?: ChatToolCall[] | null
      function_call?: { name?: string; arguments?: string } | null
    }
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
  if (msg.reasoning_content) content.push({ type: 'reasoning', text: msg.reasoning_content })
  if (msg.content) content.push({ type: 'text', text: msg.content })
  // A refusal is what the model said instead of an answer; keep it as the text the user sees.
  else if (msg.refusal) content.push({ type: 'text', text: msg.refusal })
  for (const c of msg.tool_calls ?? []) {
    content.push({ type: 'tool-call', id: c.id ?? '', name: c.function?.name ?? '', arguments: c.function?.arguments || '{}' })
  }
  if (msg.function_call) {
    content.push({ type: 'tool-call', id: `call_${body.id ?? 'legacy'}`, name: msg.function_call.name ?? '', arguments: msg.function_call.arguments || '{}' })
  }
  const providerData: Record<string, unknown> = {}
  if (body.system_fingerprint) providerData.system_fingerprint = body.system_fingerprint
  if (body.service_tier) providerData.service_tier = body.service_tier
  return {
    id: body.id ?? '',
    model: body.model ?? '',
    created: body.created ?? Math.floor(Date.now() / 1000),
    content,
    finish: refusedFinish(finishFromOpenAI(choice?.finish_reason), !msg.content && !!msg.refusal),
    usage: usageFromOpenAI(body.usage, tiers ? body.service_tier : undefined),
    ...(Object.keys(providerData).length ? { providerData: { openai: providerData } } : {}),
  }
}
