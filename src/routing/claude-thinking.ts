// Claude's thinking, as the translated request plans it for each model (providers/anthropic/
// thinking.ts) and a fallback's body is fitted to it (routing/fallback-fit.ts): the budget an
// effort stands for, and the effort a budget stands for. Data and pure functions.
import type { ReasoningEffort } from '../ir/types.ts'

export type Effort = Exclude<ReasoningEffort, 'none'>

/** reasoning effort → thinking budget_tokens. */
export const EFFORT_BUDGET: Record<Effort, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
  xhigh: 32_768,
  // the most a model may think: capped below its output limit by thinkingPlan
  max: 65_536,
}

/** Anthropic rejects a thinking budget under this. */
export const MIN_THINKING_BUDGET = 1024

/**
 * reasoning effort → Claude's `output_config.effort` (low, medium, high, max; xhigh from Opus
 * 4.7 on): `minimal` has no tier below low; on a 4.6 model xhigh is high.
 */
export const CLAUDE_EFFORT: Record<'only' | 'preferred', Record<Effort, string>> = {
  only: { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max' },
  preferred: { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'max' },
}

/** A budget → the effort whose budget first holds it (past high: high). */
export function effortOfBudget(budget: number): Effort {
  for (const e of ['low', 'medium', 'high'] as const) if (budget <= EFFORT_BUDGET[e]) return e
  return 'high'
}
