// A client's own body, fitted for a fallback model of its model's family: a model the client did
// not name, and whose rules its parameters were not written for (gpt-5's reasoning effort sent
// to gpt-4o, gpt-4o's temperature to o3, Claude's thinking to a model without it: each a 400 of
// the upstream's, where the fallback was there to answer). What the fallback would refuse is left
// out and named, as a request translated from the other family leaves out what its model refuses
// (providers/openai/request.ts). The model the client named gets its body as it sent it.
import type { CatalogModel } from '../config/catalog.ts'
import type { ReasoningEffort } from '../ir/types.ts'
import { SAMPLERS, takesBothSamplers, takesForcedChoice, takesSamplers, takesSpeed } from './claude-models.ts'
import { CLAUDE_EFFORT, EFFORT_BUDGET, effortOfBudget, MIN_THINKING_BUDGET, type Effort } from './claude-thinking.ts'
import { effortFor, REASONING_SAMPLING } from './openai-chat.ts'
import { addCompat } from './params.ts'
import { servesTier, takesRetention, takesVerbosity } from './openai-models.ts'
import { isObj } from '../lib/json.ts'

type Obj = Record<string, unknown>

/** The fallback as its rules read it. */
export interface FallbackTarget {
  /** The id it is sent as (a short name's model, a dated snapshot), whose generation says its reasoning tiers. */
  id: string
  /** It takes a reasoning effort (and refuses sampling other than the default). */
  reasons: boolean
  /** Another server of the wire (a model on vLLM): it takes what it takes, as it is sent. */
  compatible: boolean
  /** The most output it gives (undefined: not known to the gateway). */
  maxOutput?: number
  /** A Claude model's thinking form (catalog `adaptiveThinking`): adaptive only, preferred, or budgets only (undefined). */
  adaptive?: 'only' | 'preferred'
}

/** A catalog model as the rules read it: by the id it is sent as. */
export const fallbackTarget = (m: CatalogModel): FallbackTarget => ({
  id: m.upstreamId,
  reasons: m.reasoning === true,
  compatible: m.provider === 'openai-compatible',
  maxOutput: m.maxOutputTokens,
  adaptive: m.adaptiveThinking,
})

const ENCRYPTED_REASONING = 'reasoning.encrypted_content'
const OUTPUT_LOGPROBS = 'message.output_text.logprobs'

/** A Responses `include` entry the fallback refuses, left out and named. */
function withoutInclude(body: Obj, entry: string, left: string[]): void {
  if (!Array.isArray(body.include) || !body.include.includes(entry)) return
  const rest = body.include.filter((i) => i !== entry)
  if (rest.length > 0) body.include = rest
  else delete body.include
  left.push(`include.${entry}`)
}

/** A processing tier the fallback is not served at, left out (it is served at its default) and named. */
function untiered(body: Obj, to: FallbackTarget, left: string[]): void {
  const tier = body.service_tier
  if (typeof tier !== 'string' || servesTier(tier, to.id)) return
  delete body.service_tier
  left.push(`service_tier.${tier}`)
}

/** A prompt cache retention the fallback does not take, left out and named. */
function unretained(body: Obj, to: FallbackTarget, left: string[]): void {
  const v = body.prompt_cache_retention
  if (v === undefined || v === null || takesRetention(v, to.id)) return
  delete body.prompt_cache_retention
  left.push(typeof v === 'string' ? `prompt_cache_retention.${v}` : 'prompt_cache_retention')
}

/** A verbosity the fallback refuses, left out of `holder` (the body, or its `text`) and named as `name`. */
function unverbose(holder: unknown, name: string, to: FallbackTarget, left: string[]): void {
  if (typeof holder !== 'object' || holder === null) return
  const h = holder as Obj
  if (h.verbosity === undefined || h.verbosity === null || takesVerbosity(h.verbosity, to.id)) return
  delete h.verbosity
  left.push(name)
}

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

/**
 * What the reasoning models refuse on the chat wire beside their sampling: `stop`, the penalties,
 * log probabilities and logit bias (OpenAI's reasoning guide lists them; the AI SDK leaves the same
 * out for a reasoning model). A chat client's gpt-4o body carries them; its o3 fallback would 400.
 */
const REASONING_CHAT_REFUSED = ['stop', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias'] as const

/** Sampling a reasoning model refuses (REASONING_SAMPLING), and on the chat wire the rest it refuses, left out unless at effort none. */
function unsampled(body: Obj, effort: unknown, left: string[], chat: boolean): void {
  if (effort === 'none') return
  for (const [, k] of REASONING_SAMPLING) {
    if (body[k] === undefined) continue
    // at its default of 1 too, named only when it was not: gpt-5 refuses `top_p` at any value
    // ("Unsupported parameter: 'top_p' is not supported with this model"), as the translated
    // request never sends it (providers/openai/request.ts)
    if (body[k] !== 1) left.push(k)
    delete body[k]
  }
  if (!chat) {
    // "logprobs are not supported with reasoning models." (param `include`), top_logprobs with them
    if (body.top_logprobs !== undefined) {
      delete body.top_logprobs
      left.push('top_logprobs')
    }
    withoutInclude(body, OUTPUT_LOGPROBS, left)
    return
  }
  for (const k of REASONING_CHAT_REFUSED) {
    if (body[k] === undefined) continue
    delete body[k]
    left.push(k)
  }
}

/** A Chat Completions body for the fallback, in place; what it leaves out is named in `compat`. */
export function fitChatFallback(body: Obj, to: FallbackTarget, compat: string[]): void {
  const left: string[] = []
  if (to.compatible) return
  for (const field of ['max_completion_tokens', 'max_tokens']) capped(body, field, to, left)
  unverbose(body, 'verbosity', to, left)
  untiered(body, to, left)
  unretained(body, to, left)
  if (!to.reasons) {
    if (body.reasoning_effort !== undefined) {
      delete body.reasoning_effort
      left.push('reasoning_effort')
    }
    return addCompat(compat, left)
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
  addCompat(compat, left)
}

/** A Responses body for the fallback, in place; what it leaves out is named in `compat`. */
export function fitResponsesFallback(body: Obj, to: FallbackTarget, compat: string[]): void {
  const left: string[] = []
  if (to.compatible) return
  capped(body, 'max_output_tokens', to, left)
  unverbose(body, 'verbosity', to, left)
  untiered(body, to, left)
  unretained(body, to, left)
  if (isObj(body.text)) {
    // a copy: the text object may be the one the client's body holds for the model it named
    body.text = { ...body.text }
    unverbose(body.text, 'text.verbosity', to, left)
  }
  const reasoning = body.reasoning as Obj | undefined
  if (!to.reasons) {
    if (reasoning !== undefined) {
      delete body.reasoning
      left.push('reasoning')
    }
    // a model that does not reason refuses to be asked for its reasoning
    withoutInclude(body, ENCRYPTED_REASONING, left)
    return addCompat(compat, left)
  }
  const effort = effortAt(to, reasoning?.effort, left)
  if (reasoning !== undefined && effort !== reasoning.effort) {
    const { effort: _, ...rest } = reasoning
    if (effort === undefined && Object.keys(rest).length === 0) delete body.reasoning
    else body.reasoning = effort === undefined ? rest : { ...rest, effort }
  }
  unsampled(body, effort, left, false)
  addCompat(compat, left)
}

/**
 * A Messages body for a Claude fallback, in place; what it leaves out or changes is named in
 * `compat`. Its thinking goes in the fallback's own form, as the gateway plans its own thinking
 * for each model (providers/anthropic/thinking.ts): adaptive with an effort where the fallback
 * takes no budget (Opus 4.7), a budget where it takes no adaptive thinking (Sonnet 4.5), none
 * where it does not think; a budget under the output cap, and at least 1,024, or no thinking.
 * `from`: the model the client named, as it is sent upstream (whose thinking blocks the thread holds).
 */
export function fitMessagesFallback(body: Obj, to: FallbackTarget, compat: string[], from?: string): void {
  const left: string[] = []
  capped(body, 'max_tokens', to, left)
  // a thinking block is bound to the model that made it ("Invalid `signature` in `thinking` block"
  // on any other): the fallback gets the thread without them, and no thinking where its last turn
  // then calls tools without its own (which Anthropic refuses with thinking on)
  if (to.id !== from && withoutThoughtBlocks(body, left)) {
    const type = (body.thinking as Obj | undefined)?.type
    if ((type === 'enabled' || type === 'adaptive') && endsInCalls(body)) {
      delete body.thinking
      left.push('thinking')
      withoutThinkingEdits(body, left)
    }
  }
  // a body written for Opus 4.6 or before may carry samplers, which the models after refuse
  if (!takesSamplers(to.id)) {
    for (const k of SAMPLERS) {
      if (body[k] === undefined) continue
      delete body[k]
      left.push(k)
    }
  }
  // fast mode, which only a few models take
  if (body.speed !== undefined && !takesSpeed(to.id)) {
    delete body.speed
    left.push('speed')
  }
  // a forced tool choice, which the models that think always refuse: auto, the tools kept
  const choice = body.tool_choice
  if (isObj(choice) && (choice.type === 'any' || choice.type === 'tool') && !takesForcedChoice(to.id)) {
    const { name: _, ...rest } = choice
    body.tool_choice = { ...rest, type: 'auto' }
    left.push('tool_choice')
  }
  // a body written for Sonnet 4 may carry both samplers, which Claude's later models refuse together
  if (body.temperature !== undefined && body.top_p !== undefined && !takesBothSamplers(to.id)) {
    delete body.top_p
    left.push('top_p')
  }
  const config = body.output_config as Obj | undefined
  const effort = config?.effort
  const withoutEffort = (why: string) => {
    const { effort: _, ...rest } = config!
    if (Object.keys(rest).length > 0) body.output_config = rest
    else delete body.output_config
    left.push(why)
  }
  const thinking = body.thinking as Obj | undefined
  const type = thinking?.type
  if (!to.reasons) {
    if (type !== undefined && type !== 'disabled') {
      delete body.thinking
      left.push('thinking')
      unthought(body, left)
    }
    if (effort !== undefined) withoutEffort('output_config.effort')
    return addCompat(compat, left)
  }
  const maxTokens = body.max_tokens as number
  if (to.adaptive === undefined) {
    // a model of budgets: an adaptive depth is the budget its effort stands for; it takes no effort
    if (type === 'adaptive') {
      const { type: _, ...rest } = thinking!
      body.thinking = { ...rest, type: 'enabled', budget_tokens: EFFORT_BUDGET[(typeof effort === 'string' && effort in EFFORT_BUDGET ? effort : 'high') as Effort] }
      left.push('thinking.adaptive->budget_tokens')
    }
    if (effort !== undefined) withoutEffort('output_config.effort')
  } else {
    if (type === 'enabled' && to.adaptive === 'only') {
      const { budget_tokens: budget, ...rest } = thinking!
      body.thinking = { ...rest, type: 'adaptive' }
      if (effort === undefined) body.output_config = { ...config, effort: CLAUDE_EFFORT.only[effortOfBudget(budget as number)] }
      left.push('thinking.budget_tokens->adaptive')
    }
    const own = typeof effort === 'string' && effort in CLAUDE_EFFORT[to.adaptive] ? CLAUDE_EFFORT[to.adaptive][effort as Effort] : effort
    if (own !== effort) {
      body.output_config = { ...config, effort: own }
      left.push(`output_config.effort.${effort}->${own}`)
    }
  }
  // a budget must be under the cap, and at least 1,024
  const fitted = body.thinking as Obj | undefined
  const budget = fitted?.type === 'enabled' ? fitted.budget_tokens : undefined
  if (typeof budget === 'number' && budget >= maxTokens) {
    if (maxTokens > MIN_THINKING_BUDGET) {
      body.thinking = { ...fitted, budget_tokens: maxTokens - 1 }
      left.push(`thinking.budget_tokens.${budget}->${maxTokens - 1}`)
    } else {
      delete body.thinking
      left.push('thinking')
      unthought(body, left)
    }
  }
  addCompat(compat, left)
}

const THOUGHT = new Set(['thinking', 'redacted_thinking'])

/**
 * What a Messages body may not keep once its thinking is left out: the thinking blocks of its
 * assistant turns ("When thinking is disabled, an `assistant` message in the final position
 * cannot contain `thinking`"; the fallback could read none of them anyway) and a context edit
 * that clears thinking ("`clear_thinking_20251015` strategy requires `thinking` to be enabled",
 * as Claude Code sends it). Copies what it changes: the client's body stays the named model's.
 */
function unthought(body: Obj, left: string[]): void {
  withoutThoughtBlocks(body, left)
  withoutThinkingEdits(body, left)
}

/** The thinking blocks of a Messages body's assistant turns, left out and named; whether there were any. */
function withoutThoughtBlocks(body: Obj, left: string[]): boolean {
  if (!Array.isArray(body.messages)) return false
  let dropped = false
  const messages = body.messages.flatMap((m: unknown) => {
    if (!isObj(m) || m.role !== 'assistant' || !Array.isArray(m.content) || !m.content.some((b) => isObj(b) && THOUGHT.has(b.type as string))) return [m]
    dropped = true
    const content = m.content.filter((b) => !(isObj(b) && THOUGHT.has(b.type as string)))
    // a turn that held only thinking (a prefill of it) says nothing without it
    return content.length > 0 ? [{ ...m, content }] : []
  })
  if (dropped) {
    body.messages = messages
    left.push('messages.thinking')
  }
  return dropped
}

/** Whether a Messages body's last assistant turn calls tools (a tool loop's, which thinking on must begin with its thinking). */
function endsInCalls(body: Obj): boolean {
  const last = Array.isArray(body.messages) ? body.messages.findLast((m: unknown) => isObj(m) && m.role === 'assistant') : undefined
  return isObj(last) && Array.isArray(last.content) && last.content.some((b) => isObj(b) && b.type === 'tool_use')
}

/** A context edit that clears thinking, left out and named (it requires thinking on). */
function withoutThinkingEdits(body: Obj, left: string[]): void {
  const cm = body.context_management
  if (isObj(cm) && Array.isArray(cm.edits)) {
    const edits = cm.edits.filter((e) => !(isObj(e) && typeof e.type === 'string' && e.type.startsWith('clear_thinking')))
    if (edits.length < cm.edits.length) {
      const { edits: _, ...rest } = cm
      if (edits.length > 0) body.context_management = { ...rest, edits }
      else if (Object.keys(rest).length > 0) body.context_management = rest
      else delete body.context_management
      left.push('context_management.clear_thinking')
    }
  }
}
