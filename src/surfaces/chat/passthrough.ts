// The chat body an OpenAI-family upstream gets on the pass-through path: the checked body
// as it is, minus what the gateway drops. When the client did not ask for `include_usage`,
// the gateway asks upstream for it anyway (to bill), and the OpenAI tap strips the usage
// the client did not ask for, so the client never sees it.
import type { RulesOutcome } from '../../routing/params.ts'

type Body = Record<string, unknown>

export interface PassthroughBody {
  body: Body
  /** The client's own `stream_options.include_usage`. */
  clientWantsUsage: boolean
}

/**
 * What goes upstream: the body less what the family rules removed (`prompt_cache_key` among
 * them: prompt-cache scoping is internal to the gateway). Translated foreign parameters are
 * spelled in chat terms; translated stop sequences stay out for a model that `reasons` (o3,
 * gpt-5 refuse `stop` but at effort none), named as left out.
 */
export function passthroughBody(checked: Body, rules: RulesOutcome, reasons = false): PassthroughBody {
  const body: Body = { ...checked }
  for (const k of rules.removed) delete body[k]
  const c = rules.counterpart
  const effort = body.reasoning_effort ?? c.reasoning?.effort
  if (c.stop?.length && reasons && effort !== 'none') {
    rules.compat.forEach((entry, i) => {
      if (entry.startsWith('stop_sequences->')) rules.compat[i] = 'stop_sequences'
    })
  } else if (c.stop?.length) {
    const own = body.stop === undefined ? [] : typeof body.stop === 'string' ? [body.stop] : (body.stop as string[])
    body.stop = [...own, ...c.stop]
  }
  if (c.reasoning?.effort && body.reasoning_effort === undefined) body.reasoning_effort = c.reasoning.effort
  const so = (body.stream_options ?? {}) as Body
  const clientWantsUsage = so.include_usage === true
  if (body.stream === true && !clientWantsUsage) body.stream_options = { ...so, include_usage: true }
  else if (body.stream !== true) delete body.stream_options
  return { body, clientWantsUsage }
}
