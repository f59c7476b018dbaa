// Which deployment a request tries first, and which failures move it on to the next.
//
// The rule when everything rests: `order` leaves cooled deployments out, so a model whose
// deployments all rest gives an empty list and the caller goes on to the model's fallbacks.
// When every deployment of the model and of all its fallbacks rests, the caller still makes one
// upstream call rather than failing without one: `lastResort` over all of them names the
// deployment whose rest ends first (one whose probe is out counts as ending now), and the
// caller sends to it without asking maySend, recording the outcome as usual.
import type { Deployment, RetryOn } from '../config/providers.ts'
import { statusRule } from '../providers/errors.ts'
import { credentialsRefused } from '../providers/http.ts'
import { UpstreamError } from '../ir/errors.ts'
import { deploymentKey, type DeploymentHealth } from './health.ts'

/**
 * The order to try a model's deployments: every deployment of a lower `priority` before any of a
 * higher one; within a priority a weighted random order (weight 3 against 1: the heavier first
 * three times in four); resting ones (cooling, or probing for another request) left out; a
 * half-open one kept in its place, once, for its probe (the caller's maySend claims it).
 * Deployments of weight 0 or less come last in their priority, in the order given.
 */
export function order(deployments: readonly Deployment[], health: Pick<DeploymentHealth, 'state'>, random: () => number = Math.random): Deployment[] {
  const open = deployments.filter((d) => {
    const s = health.state(deploymentKey(d)).kind
    return s === 'ok' || s === 'half-open'
  })
  const priorities = [...new Set(open.map((d) => d.priority))].sort((a, b) => a - b)
  return priorities.flatMap((p) => shuffleByWeight(open.filter((d) => d.priority === p), random))
}

/** Draws without replacement, each with probability weight / remaining weight. */
function shuffleByWeight(group: Deployment[], random: () => number): Deployment[] {
  const left = group.filter((d) => d.weight > 0)
  const out: Deployment[] = []
  let total = left.reduce((sum, d) => sum + d.weight, 0)
  while (left.length > 0) {
    let r = random() * total
    let i = 0
    while (i < left.length - 1 && r >= left[i]!.weight) r -= left[i++]!.weight
    const [d] = left.splice(i, 1)
    total -= d!.weight
    out.push(d!)
  }
  return out.concat(group.filter((d) => !(d.weight > 0)))
}

/** Every candidate rests: the one whose rest ends first (undefined only for an empty list). */
export function lastResort(deployments: readonly Deployment[], health: Pick<DeploymentHealth, 'state'>): Deployment | undefined {
  let best: Deployment | undefined
  let bestAt = Infinity
  for (const d of deployments) {
    const s = health.state(deploymentKey(d))
    const at = s.kind === 'cooling' ? s.until : -Infinity
    if (at < bestAt) {
      best = d
      bestAt = at
    }
  }
  return best
}

/**
 * Whether an upstream failure before the first byte is worth the next deployment, per
 * `retry_on`, or a deployment whose every key the upstream refused (401/403 with none left):
 * `timeout` and `connect` match the transport's failures; numbers match the
 * upstream's own HTTP status. An error that carries that status (`upstreamStatus`) is matched
 * on it; otherwise the statuses the mapping could have come from are: the upstream statuses
 * that map to the client's status with the same retryability (a 502 that is retryable came
 * from a 5xx, one that is not from a 401/402/403; a 503 from 503 or 529).
 */
export function retryable(error: unknown, retryOn: readonly RetryOn[]): boolean {
  if (!(error instanceof UpstreamError)) return false
  // the deployment's own credentials refused, every key of them: the deployment is down for
  // every request (an operator's mistake, a revoked key), whatever `retry_on` lists
  if (credentialsRefused(error)) return true
  const own = (error as { upstreamStatus?: unknown }).upstreamStatus
  if (typeof own === 'number') return retryOn.includes(own)
  if (error.type === 'timeout') return retryOn.includes('timeout')
  if (error.type === 'connection_error') return retryOn.includes('connect')
  return retryOn.some((r) => typeof r === 'number' && couldBe(r, error))
}

/** Whether an upstream answer of `upstream` becomes this error under the status mapping. */
function couldBe(upstream: number, error: UpstreamError): boolean {
  const rule = statusRule(upstream)
  return rule.status === error.status && rule.retryable === error.retryable
}

/**
 * A prompt past its model's context window, as each wire says it: OpenAI's code
 * `context_length_exceeded` (chat, and Responses also in band before any output), Anthropic's
 * "prompt is too long: 219898 tokens > 200000 maximum" and "input length and `max_tokens` exceed
 * context limit: 178959 + 64000 > 200000, …", a server of the wire's (vLLM) "maximum context
 * length is 4096 tokens" or "the model's context length is only 202752 tokens".
 */
const CONTEXT_SAID = /prompt is too long|exceed context limit|maximum context length|context length is only|exceeds the context window/i
/** The window the message names, where it names one. */
const LIMIT_SAID = [/> ?(\d+) maximum/, /> ?(\d+), decrease/, /context length is (?:only )?(\d+)/i]

/**
 * The window a failure says the prompt does not fit (`window`: the model's as the catalog has
 * it, unless the message names its own), or undefined for any other failure. No deployment of a
 * window as small can serve the request; a fallback of a larger one may, as OpenRouter's
 * fallbacks and LiteLLM's context-window fallbacks do.
 */
export function exceededWindow(error: unknown, window: number): number | undefined {
  if (!(error instanceof UpstreamError) || error.status !== 400) return undefined
  if (error.type !== 'context_length_exceeded' && !CONTEXT_SAID.test(error.message)) return undefined
  for (const re of LIMIT_SAID) {
    const said = re.exec(error.message)?.[1]
    if (said !== undefined) return Number(said)
  }
  return window
}
