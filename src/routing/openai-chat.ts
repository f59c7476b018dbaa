// How OpenAI's chat wire takes three things a translation fills in: reasoning effort (each model
// generation's own tiers), stop sequences (at most four) and a response format. The provider's
// translated request and the chat surface's pass-through (the other family's parameters of a
// chat body) read the same rules, from here: neither imports the other.
import type { ReasoningEffort, ResponseFormat } from '../ir/types.ts'

/**
 * Sampling a reasoning model refuses: OpenAI's reasoning models take temperature and top_p only
 * at their default of 1 (GPT-5.1 and later also with reasoning effort `none`). A request that is
 * not the client's own call to that model (translated from the other family, or sent to a
 * fallback) leaves it out and names it, as the AI SDK does, rather than send it to be refused.
 * IR field → wire name.
 */
export const REASONING_SAMPLING = [
  ['temperature', 'temperature'],
  ['topP', 'top_p'],
] as const

/** Chat Completions refuses more stop sequences than this (Claude's have no count limit). */
export const MAX_STOPS = 4

/** The models with no tier above high: all before gpt-5.1-codex-max. */
const HIGH_TOPS = /^(o\d|gpt-5(-|$)|gpt-5\.1(?!-codex-max))/
const O_SERIES = /^o\d/
/** GPT-5 before 5.1: its least is `minimal`. */
const GPT5 = /^gpt-5(-|$)/
/** GPT-5.1 and later: `none` below low, no `minimal`. */
const NONE_BELOW_LOW = /^gpt-(5\.[1-9]|[6-9]|\d\d)/
/** The pro models think at high only. */
const HIGH_ONLY = /^(gpt-5(\.\d+)?-pro|o\d+-pro)(-|$)/
/**
 * The codex models of GPT-5 and 5.1 think at least at low: "Unsupported value: 'none' is not
 * supported with the 'gpt-5.1-codex' model. Supported values are: 'low', 'medium', and 'high'."
 * So does GPT-6 and later, whose tiers are low to max (the AI SDK's model catalog).
 */
const LOW_LEAST = /^(gpt-5(\.1)?-codex|gpt-([6-9]|\d\d))/
/**
 * GPT-5.2 to 5.5 (and gpt-5.1-codex-max) top out at xhigh: "Supported values are: 'none',
 * 'low', 'medium', 'high', and 'xhigh'" (gpt-5.2); the AI SDK's catalog gives `max` from 5.6 on.
 */
const XHIGH_TOPS = /^(gpt-5\.[2-5](?!\d)|gpt-5\.1-codex-max)/

/**
 * An effort as the model's own tiers, where they are known to be fewer: the o-series take low
 * to high (no effort sent for `none`: they always think), GPT-5 before 5.1 minimal to high,
 * GPT-5.1 and later none, low and up (no minimal), the codex models of 5 and 5.1 and GPT-6 and
 * later low and up, the pro models high alone; no model before gpt-5.1-codex-max has a tier above high, and none before
 * 5.6 one above xhigh. null: sent without. A later model's upper tiers go as asked: its upstream
 * knows them.
 */
export function effortFor(id: string, effort: ReasoningEffort): string | null {
  const o = O_SERIES.test(id)
  if (HIGH_ONLY.test(id)) return 'high'
  if ((effort === 'none' || effort === 'minimal') && LOW_LEAST.test(id)) return 'low'
  if (effort === 'none') return o ? null : GPT5.test(id) ? 'minimal' : 'none'
  if (effort === 'minimal') return o || NONE_BELOW_LOW.test(id) ? 'low' : effort
  if (effort === 'xhigh' || effort === 'max') return HIGH_TOPS.test(id) ? 'high' : effort === 'max' && XHIGH_TOPS.test(id) ? 'xhigh' : effort
  return effort
}

/** An IR response format as Chat Completions spells it. */
export function chatResponseFormat(f: ResponseFormat): Record<string, unknown> {
  if (f.type !== 'json_schema') return { type: f.type }
  const js: Record<string, unknown> = { name: f.name }
  if (f.description !== undefined) js.description = f.description
  if (f.schema !== undefined) js.schema = f.schema
  if (f.strict !== undefined) js.strict = f.strict
  return { type: 'json_schema', json_schema: js }
}
