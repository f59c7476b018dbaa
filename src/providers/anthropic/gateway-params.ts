// The two parameters the messages surface takes beyond Anthropic's own, spelled in Anthropic's
// terms on the pass-through, so that a Claude request that uses them keeps every block it
// carries as it came (documents with citations, search results, server tools' history):
// `parallel_tool_calls: false` is `tool_choice.disable_parallel_tool_use`, and
// `reasoning_effort` is thinking as thinkingPlan makes it for the translated path. Pure.
import { defaultMaxTokens, type CatalogModel } from '../../config/catalog.ts'
import type { ReasoningEffort } from '../../ir/types.ts'
import { refusesThinking, thinkingPlan, thinks, withoutThinking } from './thinking.ts'

type Json = Record<string, unknown>

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** `body` without the gateway's parameters, in Anthropic's terms; `leftOut` names what thinking made it leave out. */
export function spellGatewayParams(body: Json, model: CatalogModel): { body: Json; leftOut: string[] } {
  if (body.parallel_tool_calls === undefined && body.reasoning_effort === undefined) return { body, leftOut: [] }
  const { parallel_tool_calls: parallel, reasoning_effort: effort, ...out } = body
  const leftOut: string[] = []
  if (parallel === false && Array.isArray(out.tools) && out.tools.length > 0) {
    const choice = isObj(out.tool_choice) ? out.tool_choice : { type: 'auto' }
    if (choice.type !== 'none') out.tool_choice = { ...choice, disable_parallel_tool_use: true }
  }
  if (typeof effort !== 'string') return { body: out, leftOut }
  if (out.thinking === undefined) {
    const asked = typeof out.max_tokens === 'number' ? out.max_tokens : defaultMaxTokens(model)
    const planned = thinkingPlan({ reasoning: { effort: effort as ReasoningEffort } }, model, asked)
    // a tool loop's turn whose thinking the client did not send back, or a prefill, goes without (Anthropic refuses either with)
    const plan = Array.isArray(out.messages) && refusesThinking(out.messages) ? withoutThinking(planned, asked) : planned
    if (plan.effort) out.output_config = { effort: plan.effort, ...(isObj(out.output_config) ? out.output_config : {}) }
    if (!plan.thinking) return { body: out, leftOut }
    out.thinking = plan.thinking
    out.max_tokens = plan.maxTokens
    withoutWhatThinkingForbids(out, leftOut)
  } else {
    // thinking the client gave says how much: an effort beside it counts only as the depth of
    // adaptive thinking, where output_config names none. Otherwise it goes unused, and is named
    const adaptive = thinks(out.thinking) && (out.thinking as Json).type === 'adaptive' && effort !== 'none'
    const plan = adaptive ? thinkingPlan({ reasoning: { effort: effort as ReasoningEffort } }, model, 1) : undefined
    const config = isObj(out.output_config) ? out.output_config : {}
    if (plan?.effort && config.effort === undefined) out.output_config = { effort: plan.effort, ...config }
    else leftOut.push('reasoning_effort')
  }
  return { body: out, leftOut }
}

/** Thinking forbids temperature, top_k, top_p below 0.95 and a forced tool choice (it becomes auto): left out, and named. */
function withoutWhatThinkingForbids(out: Json, leftOut: string[]): void {
  for (const k of ['temperature', 'top_k'] as const) {
    if (out[k] === undefined) continue
    delete out[k]
    leftOut.push(k)
  }
  if (typeof out.top_p === 'number' && out.top_p < 0.95) {
    delete out.top_p
    leftOut.push('top_p')
  }
  const choice = out.tool_choice
  if (isObj(choice) && (choice.type === 'any' || choice.type === 'tool')) {
    const { type: _t, name: _n, ...rest } = choice
    out.tool_choice = { ...rest, type: 'auto' }
    leftOut.push('tool_choice')
  }
}
