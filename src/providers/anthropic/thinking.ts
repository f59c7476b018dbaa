// A request's reasoning in Claude's terms. Models before 4.6 think on a budget
// (`thinking: {type: "enabled", budget_tokens}`); Opus 4.7 and later, and the Claude 5 models,
// refuse a budget and think adaptively, their depth set by `output_config.effort`; the 4.6
// models take both (adaptive preferred). The catalog says which (`adaptiveThinking`). Pure.
import { defaultMaxTokens, type CatalogModel } from '../../config/catalog.ts'
import type { GenerationRequest } from '../../ir/types.ts'
import { CLAUDE_EFFORT, EFFORT_BUDGET, effortOfBudget, MIN_THINKING_BUDGET, type Effort } from '../../routing/claude-thinking.ts'

type Json = Record<string, unknown>
export interface ThinkingPlan {
  thinking?: Json
  /** `output_config.effort` of adaptive thinking. */
  effort?: string
  maxTokens: number
  /** A budget the model does not take, sent as the effort nearest it: named for the client. */
  budgetAsEffort?: true
}

/**
 * reasoning → `thinking`. Adaptive where the model takes no budget, or where no budget was
 * asked on a model that prefers it: the effort (or the budget's nearest) goes as
 * `output_config.effort`, its thinking shown summarized (omitted where the summary asked is
 * `none`), and max_tokens stays as asked. A budget is at least 1024 and below
 * max_tokens:
 * - a smaller budget (Claude Code sometimes sends 500) is RAISED to 1024, not dropped —
 *   the client asked for thinking, and 1024 is the least Anthropic gives;
 * - when max_tokens does not exceed the budget, max_tokens is raised to budget + the
 *   max_tokens asked for, so the visible answer keeps the room the client wanted; both are
 *   capped by the model's output limit (the budget then shrinks to fit below it).
 * Models without thinking support get none.
 */
export function thinkingPlan(req: Pick<GenerationRequest, 'reasoning'>, model: CatalogModel, maxTokens: number): ThinkingPlan {
  const r = req.reasoning
  if (!model.reasoning || !r || r.effort === 'none' || (r.effort === undefined && r.budgetTokens === undefined)) return { maxTokens }
  const form = model.adaptiveThinking
  if (form === 'only' || (form === 'preferred' && r.budgetTokens === undefined)) {
    const effort = (r.effort as Effort | undefined) ?? effortOfBudget(r.budgetTokens!)
    // its text shown (`summarized`, the 4.6 models' default; from Opus 4.7 on the default omits
    // it, and a chat client's reasoning_content would stay empty), unless no summary was asked
    const display = r.summary === 'none' ? 'omitted' : 'summarized'
    return { thinking: { type: 'adaptive', display }, effort: CLAUDE_EFFORT[form][effort] ?? 'medium', maxTokens, ...(r.effort === undefined ? { budgetAsEffort: true as const } : {}) }
  }
  let budget = Math.max(MIN_THINKING_BUDGET, r.budgetTokens ?? EFFORT_BUDGET[r.effort as Effort] ?? EFFORT_BUDGET.medium)
  let max = maxTokens
  if (max <= budget) max = Math.min(budget + maxTokens, defaultMaxTokens(model))
  if (budget >= max) budget = max - 1
  if (budget < MIN_THINKING_BUDGET) return { maxTokens }
  return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: max }
}

/** Whether a `thinking` value the client gave as it is (adaptive, a display) turns thinking on. */
export function thinks(carried: unknown): boolean {
  const type = (carried as { type?: unknown } | undefined)?.type
  return type === 'enabled' || type === 'adaptive'
}

/** Anthropic turns as a request holds them (the gateway's, or a client's on the pass-through). */
type Turns = readonly { role?: unknown; content?: unknown }[]

/**
 * Whether a tool loop's last assistant turn lost its thinking: it calls tools but does not begin
 * with a thinking block, as a client that keeps no signed blocks sends it back (a chat client
 * that drops `thinking_blocks`, a messages client that strips them). Anthropic refuses such a
 * turn with thinking on ("a final assistant message must start with a thinking block"), so the
 * request goes without thinking: the loop goes on, unthought, where it would otherwise fail on
 * its second call.
 */
function lostThinking(turns: Turns): boolean {
  const last = turns.findLast((t) => t.role === 'assistant')
  const content = Array.isArray(last?.content) ? (last.content as { type?: unknown }[]) : []
  if (!content.some((b) => b?.type === 'tool_use')) return false
  const first = content[0]?.type
  return first !== 'thinking' && first !== 'redacted_thinking'
}

/**
 * Whether the conversation ends on an assistant turn of text for Claude to write on from (a
 * prefill), which Anthropic does not take with thinking on: the request goes without thinking.
 */
export function prefilled(turns: Turns): boolean {
  const last = turns.at(-1)
  if (last?.role !== 'assistant') return false
  if (typeof last.content === 'string') return true
  return Array.isArray(last.content) && (last.content as { type?: unknown }[]).at(-1)?.type === 'text'
}

/** Whether Anthropic refuses these turns with thinking on: a tool loop's lost thinking, or a prefill. */
export const refusesThinking = (turns: Turns): boolean => lostThinking(turns) || prefilled(turns)

/**
 * A plan for a turn whose thinking was lost: no thinking, max_tokens as asked; an adaptive
 * model's effort still goes (it sets the depth of the answer with or without thinking).
 */
export function withoutThinking(plan: ThinkingPlan, maxTokens: number): ThinkingPlan {
  return plan.effort !== undefined ? { effort: plan.effort, maxTokens } : { maxTokens }
}
