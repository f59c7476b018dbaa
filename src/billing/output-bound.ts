// The output a request can be billed for, for its reservation: the client's cap is not always
// the most the upstream is asked for.
// - A Claude model asked to think gets max_tokens raised to hold the thinking budget
//   (thinkingPlan: `max_tokens: 1` with `reasoning_effort: "max"` goes upstream as 64,000), so
//   the reservation holds the raised cap, not the client's.
// - Chat's `n` asks for that many choices, each up to the cap (the admission multiplies).
import { defaultMaxTokens, type CatalogModel } from '../config/catalog.ts'
import type { ReasoningConfig, ReasoningEffort } from '../ir/types.ts'
import { thinkingPlan } from '../providers/anthropic/thinking.ts'

/** What a request asks of thinking, in the IR's terms (effort, or a budget of tokens). */
export interface ThinkingAsk {
  effort?: unknown
  budgetTokens?: unknown
}

/** The output cap the upstream is sent for `cap` (undefined: the model's own), thinking included. */
export function outputCap(model: CatalogModel, cap: number | undefined, thinking?: ThinkingAsk): number | undefined {
  if (model.family !== 'anthropic' || !model.reasoning || !thinking) return cap
  const reasoning: ReasoningConfig = {}
  if (typeof thinking.effort === 'string') reasoning.effort = thinking.effort as ReasoningEffort
  if (typeof thinking.budgetTokens === 'number') reasoning.budgetTokens = thinking.budgetTokens
  if (reasoning.effort === undefined && reasoning.budgetTokens === undefined) return cap
  const asked = cap ?? defaultMaxTokens(model)
  const sent = thinkingPlan({ reasoning }, model, asked).maxTokens
  return sent > asked ? sent : cap
}

/** `thinking: {type: 'enabled', budget_tokens}` (chat and messages) as a budget; any other form asks for none here. */
export const budgetOf = (thinking: unknown): number | undefined => {
  const t = thinking as { type?: unknown; budget_tokens?: unknown } | undefined
  return t?.type === 'enabled' && typeof t.budget_tokens === 'number' ? t.budget_tokens : undefined
}
