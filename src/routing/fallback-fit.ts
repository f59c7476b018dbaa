// A client's own body, fitted for a fallback model of its model's family: a model the client did
// not name, and whose rules its parameters were not written for (gpt-5's reasoning effort sent
// to gpt-4o, gpt-4o's temperature to o3, Claude's thinking to a model without it: each a 400 of
// the upstream's, where the fallback was there to answer). What the fallback would refuse is left
// out and named, as a request translated from the other family leaves out what its model refuses
// (providers/openai/request.ts). The model the client named gets its body as it sent it.
import type { ReasoningEffort } from '../ir/types.ts'
import { effortFor } from './openai-chat.ts'

type Obj = Record<string, unknown>

/** The fallback as its rules read it. */
export interface FallbackTarget {
  /** The catalog id, whose generation says its reasoning tiers. */
  id: string
  /** It takes a reasoning effort (and refuses sampling other than the default). */
  reasons: boolean
  /** Another server of the wire (a model on vLLM): it takes what it takes, as it is sent. */
  compatible: boolean
  /** The most output it gives (undefined: not known to the gateway). */
  maxOutput?: number
}

const ENCRYPTED_REASONING = 'reasoning.encrypted_content'

/** The effort in the fallback's own tiers (o3 has no `minimal`), or none at all; what changed is named. */
function effortAt(to: FallbackTarget, effort: unknown, left: string[]): unknown {
  if (typeof effort !== 'string') return effort
  const own = effortFor(to.id, effort as ReasoningEffort)
  if (own !== effort) left.push(`reasoning_effort.${effort}${own === null ? '' : `->${own}`}`)
  return own ?? undefined
}

/** An output cap past the fallback's own is its own (Claude Code's 32,000 would be a 400 of a model that gives 8,192). */
function capped(body: Obj, field: string, to: FallbackTarget, left: string[]): void {
  const v = body[field]
  if (typeof v !== 'number' || to.maxOutput === undefined || v <= to.maxOutput) return
  body[field] = to.maxOutput
  left.push(`${field}.${v}->${to.maxOutput}`)
}

/** OpenAI's reasoning models take temperature and top_p at their default only (and, GPT-5.1 on, at effort none). */
function unsampled(body: Obj, effort: unknown, left: string[], stop: boolean): void {
  if (effort === 'none') return
  for (const k of ['temperature', 'top_p']) {
    if (body[k] !== undefined && body[k] !== 1) {
      delete body[k]
      left.push(k)
    }
  }
  if (stop && body.stop !== undefined) {
    delete body.stop
    left.push('stop')
  }
}

/** Names what was left out in the request's compat list (x-switchyard-compat), each once. */
function named(compat: string[], left: string[]): void {
  for (const n of left) if (!compat.includes(n)) compat.push(n)
}

/** A Chat Completions body for the fallback, in place; what it leaves out is named in `compat`. */
export function fitChatFallback(body: Obj, to: FallbackTarget, compat: string[]): void {
  const left: string[] = []
  if (to.compatible) return
  for (const field of ['max_completion_tokens', 'max_tokens']) capped(body, field, to, left)
  if (!to.reasons) {
    if (body.reasoning_effort !== undefined) {
      delete body.reasoning_effort
      left.push('reasoning_effort')
    }
    return named(compat, left)
  }
  const effort = effortAt(to, body.reasoning_effort, left)
  if (effort === undefined) delete body.reasoning_effort
  else body.reasoning_effort = effort
  // the reasoning models refuse `max_tokens` ("use max_completion_tokens instead")
  if (body.max_tokens !== undefined) {
    body.max_completion_tokens ??= body.max_tokens
    delete body.max_tokens
  }
  unsampled(body, effort, left, true)
  named(compat, left)
}

/** A Responses body for the fallback, in place; what it leaves out is named in `compat`. */
export function fitResponsesFallback(body: Obj, to: FallbackTarget, compat: string[]): void {
  const left: string[] = []
  if (to.compatible) return
  capped(body, 'max_output_tokens', to, left)
  const reasoning = body.reasoning as Obj | undefined
  if (!to.reasons) {
    if (reasoning !== undefined) {
      delete body.reasoning
      left.push('reasoning')
    }
    // a model that does not reason refuses to be asked for its reasoning
    if (Array.isArray(body.include) && body.include.includes(ENCRYPTED_REASONING)) {
      const rest = body.include.filter((i) => i !== ENCRYPTED_REASONING)
      if (rest.length > 0) body.include = rest
      else delete body.include
      left.push(`include.${ENCRYPTED_REASONING}`)
    }
    return named(compat, left)
  }
  const effort = effortAt(to, reasoning?.effort, left)
  if (reasoning !== undefined && effort !== reasoning.effort) {
    const { effort: _, ...rest } = reasoning
    if (effort === undefined && Object.keys(rest).length === 0) delete body.reasoning
    else body.reasoning = effort === undefined ? rest : { ...rest, effort }
  }
  unsampled(body, effort, left, false)
  named(compat, left)
}

/** A Messages body for a Claude fallback, in place; what it leaves out is named in `compat`. */
export function fitMessagesFallback(body: Obj, to: FallbackTarget, compat: string[]): void {
  const left: string[] = []
  capped(body, 'max_tokens', to, left)
  const thinking = body.thinking as Obj | undefined
  if (thinking !== undefined && thinking.type !== 'disabled') {
    const budget = thinking.budget_tokens
    const maxTokens = body.max_tokens as number
    // a budget must be under the cap, and at least 1,024
    if (to.reasons && typeof budget === 'number' && budget >= maxTokens && maxTokens > MIN_BUDGET) {
      body.thinking = { ...thinking, budget_tokens: maxTokens - 1 }
      left.push(`thinking.budget_tokens.${budget}->${maxTokens - 1}`)
    } else if (!to.reasons || (typeof budget === 'number' && budget >= maxTokens)) {
      delete body.thinking
      left.push('thinking')
    }
  }
  named(compat, left)
}

const MIN_BUDGET = 1024
