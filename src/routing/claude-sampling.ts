// Which Claude models take `temperature` and `top_p` together: the 3s, and Sonnet 4 and Opus 4.
// Later ones take one or the other (Anthropic's 400: "temperature and top_p cannot both be
// specified for this model"). Read by the translated request (providers/anthropic/request.ts) and
// by a Claude fallback's fitting (routing/fallback-fit.ts).
const BOTH_SAMPLERS = /^claude-(3-|(sonnet|opus)-4(-0|-\d{8})?$)/

/** Whether the Claude model sent as `upstreamId` takes temperature and top_p in one request. */
export const takesBothSamplers = (upstreamId: string): boolean => BOTH_SAMPLERS.test(upstreamId)
