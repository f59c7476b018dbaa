// What a Claude model takes, from its id, where the models differ and the wire says nothing: read
// by the translated request (providers/anthropic/request.ts) and by a Claude fallback's fitting
// (routing/fallback-fit.ts). Pure.
//
// Samplers: the 3s, and Sonnet 4 and Opus 4, take `temperature` and `top_p` together; the models
// after them one or the other (Anthropic's 400: "temperature and top_p cannot both be specified
// for this model"); from Opus 4.7 on (the models that think adaptively only: Opus 4.7 and 4.8,
// Sonnet 5, Opus 5, Fable 5) none of temperature, top_p and top_k ("`temperature` is deprecated
// for this model."). Structured output (`output_config.format`): Opus 4.1, Sonnet 4.5, Haiku 4.5
// and the models after them; not the 3s, Sonnet 4 or Opus 4. A forced tool choice (`any`,
// `tool`): every model but Fable 5.1 and 5.2, Mythos 5.1, Opus 5.5 and Sonnet 5.5 ("tool_choice:
// type \"tool\" and \"any\" are not supported for this model."), which think always; Fable 5 does.
// Fast mode (`speed: "fast"`): Opus 4.6 (served at standard speed since June 2026, without a
// word), Opus 4.8 and Opus 5; every other model refuses the field ("'claude-opus-4-7' does not
// support the `speed` parameter.").
import { adaptiveThinkingOf, claudeVersion } from '../config/catalog.ts'

const BOTH_SAMPLERS = /^claude-(3-|(sonnet|opus)-4(-0|-\d{8})?$)/

/** Whether the Claude model sent as `upstreamId` takes temperature and top_p in one request. */
export const takesBothSamplers = (upstreamId: string): boolean => BOTH_SAMPLERS.test(upstreamId)

/** Whether the Claude model sent as `upstreamId` takes temperature, top_p and top_k at all. */
export const takesSamplers = (upstreamId: string): boolean => adaptiveThinkingOf(upstreamId) !== 'only'

/** The samplers in Anthropic's names, for a model that takes none of them. */
export const SAMPLERS = ['temperature', 'top_p', 'top_k'] as const

/**
 * Whether the Claude model sent as `upstreamId` has structured output of its own
 * (`output_config.format`). An id of no Claude version (another server's model) is sent it.
 */
export function takesFormat(upstreamId: string): boolean {
  const version = claudeVersion(upstreamId)
  return version !== undefined ? version >= 4.01 : !/^claude-\d/.test(upstreamId)
}

/** The models that refuse a forced tool choice, by id (a list: Fable 5 takes one, Fable 5.1 not). */
const NO_FORCED_CHOICE = /^claude-(fable-5-[12]|mythos-5-1|opus-5-5|sonnet-5-5)(?![0-9])/

/** Whether the Claude model sent as `upstreamId` takes a forced tool choice (`any`, `tool`). */
export const takesForcedChoice = (upstreamId: string): boolean => !NO_FORCED_CHOICE.test(upstreamId)

/** The models that take `speed` (fast mode), by id, a dated snapshot too. */
const FAST_MODE = /^claude-opus-(4-6|4-8|5)(-\d{8})?$/

/** Whether the Claude model sent as `upstreamId` takes `speed` (fast mode). */
export const takesSpeed = (upstreamId: string): boolean => FAST_MODE.test(upstreamId)
