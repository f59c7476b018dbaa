// The chat body an OpenAI-family upstream gets on the pass-through path: the checked body
// as it is, minus what the gateway drops. When the client did not ask for `include_usage`,
// the gateway asks upstream for it anyway (to bill), and the OpenAI tap strips the usage
// the client did not ask for, so the client never sees it.
import type { RulesOutcome } from '../../routing/params.ts'
import { MAX_STOPS, chatResponseFormat, effortFor } from '../../routing/openai-chat.ts'
import { COUNTERPART_WIRE, type Counterpart } from '../../routing/translate.ts'
import { badRequest } from '../../http/errors.ts'
import { fitChatFallback, type FallbackTarget } from '../../routing/fallback-fit.ts'

type Body = Record<string, unknown>

export interface PassthroughBody {
  body: Body
  /** The client's own `stream_options.include_usage`. */
  clientWantsUsage: boolean
}

/** The model a pass-through body goes to, as its foreign parameters' translation (and a fallback's fitting) reads it. */
export type PassthroughTarget = FallbackTarget

/**
 * A counterpart left out after all: a foreign parameter named as what it became no longer names
 * it (`thinking->reasoning_effort` is `thinking`, `output_config->reasoning_effort+response_format`
 * is `output_config->response_format`).
 */
function leftOut(rules: RulesOutcome, counterpart: keyof Counterpart): void {
  const wire = COUNTERPART_WIRE.openai[counterpart]
  rules.compat.forEach((entry, i) => {
    const [name, became] = entry.split('->')
    if (became === undefined) return
    const wires = became.split('+')
    const kept = wires.filter((w) => w !== wire)
    if (kept.length < wires.length) rules.compat[i] = kept.length ? `${name}->${kept.join('+')}` : name!
  })
}

/**
 * What goes upstream: the body less what the family rules removed (`prompt_cache_key` among
 * them: prompt-cache scoping is internal to the gateway). Translated foreign parameters are
 * spelled in chat terms, as the translated request spells them (routing/openai-chat.ts):
 * Claude's thinking as the model's own effort tier, left out for a model that does not reason
 * (gpt-4o refuses any effort); stop sequences stay out for a model that reasons (o3, gpt-5 refuse `stop` but at
 * effort none), and beside the client's own may make no more than four; a Claude structured
 * output format is the response format, unless the client gave its own. What is left out is named.
 */
export function passthroughBody(checked: Body, rules: RulesOutcome, target: PassthroughTarget, fallback = false): PassthroughBody {
  const body: Body = { ...checked }
  for (const k of rules.removed) delete body[k]
  // a fallback of the family, not the model the client wrote its parameters for
  if (fallback) fitChatFallback(body, target, rules.compat)
  const c = rules.counterpart
  // Claude's thinking (or output_config.effort): the client's own reasoning_effort stands
  if (c.reasoning?.effort) {
    const effort = body.reasoning_effort !== undefined || !target.reasons ? null : target.compatible ? c.reasoning.effort : effortFor(target.id, c.reasoning.effort)
    if (effort === null) leftOut(rules, 'reasoning')
    else body.reasoning_effort = effort
  }
  // Claude's structured output (output_config.format): the client's own response_format stands
  if (c.responseFormat && body.response_format === undefined) body.response_format = chatResponseFormat(c.responseFormat)
  else if (c.responseFormat) leftOut(rules, 'responseFormat')
  if (c.stop?.length && target.reasons && !target.compatible && body.reasoning_effort !== 'none') leftOut(rules, 'stop')
  else if (c.stop?.length) {
    const own = body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : (body.stop as string[])
    const stop = [...own, ...c.stop]
    if (stop.length > MAX_STOPS) throw badRequest(`stop_sequences: with stop, ${stop.length} stop sequences; OpenAI models take at most ${MAX_STOPS}`)
    body.stop = stop
  }
  const so = (body.stream_options ?? {}) as Body
  const clientWantsUsage = so.include_usage === true
  if (body.stream === true && !clientWantsUsage) body.stream_options = { ...so, include_usage: true }
  else if (body.stream !== true) delete body.stream_options
  return { body, clientWantsUsage }
}
