// Anthropic's modes priced apart from its standard rates, as a factor of the standard price of a
// request's tokens (cache reads and writes too: their multipliers apply on top; a server tool's
// uses not). The price library knows only the standard rates; the reply's usage says how it was
// served (`speed`, `inference_geo`), and a request is held at what it asks for.
//
// - Fast mode (`speed: "fast"`): Opus 4.6 and 4.7 at six times the standard price ($30 / $150 a
//   million tokens), Opus 4.8 at twice ($10 / $50). A model missing here is held and billed at
//   the highest factor listed.
// - US-only inference (`inference_geo: "us"`, or a workspace's default, which the usage reports
//   unasked): 1.1× on Opus 4.6, Sonnet 4.6 and the models after them; earlier models at standard.
//   Held at 1.1× unless the request asks for `global`, since the workspace's default is not known here.
// The two multiply.
import type { Usage } from '../ir/types.ts'

/** Fast mode's price ÷ standard price, by upstream model id (a dated snapshot reads its base id). */
const FAST = new Map<string, number>(Object.entries({
  'claude-opus-4-6': 6,
  'claude-opus-4-7': 6,
  'claude-opus-4-8': 2,
}))
const UNLISTED_FAST = Math.max(...FAST.values())
const US_ONLY = 1.1

/** What of a reply's (or a request's) usage is priced apart here. */
export type Premiums = Pick<Usage, 'speed' | 'inferenceGeo'>

/**
 * A Claude model's id as Anthropic's price list names it: no date (`-20260205`), no Vertex
 * version (`@20260205`), no context suffix (`[1m]`), no Bedrock region or version
 * (`us.anthropic.…-v1:0`).
 */
export function baseClaudeId(id: string): string {
  return id
    .toLowerCase()
    .replace(/^(?:[a-z]{2,4}\.)?anthropic\./, '')
    .replace(/\[[^\]]*\]$/, '')
    .replace(/@.*$/, '')
    .replace(/-v\d+(?::\d+)?$/, '')
    .replace(/-\d{8}$/, '')
}
/** A Claude model's version (`claude-opus-4-6` → 4.6, `claude-3-5-haiku` → 3.5); undefined when its id says none. */
function version(id: string): number | undefined {
  const m = /^claude-(?:(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?|(\d+)(?:-(\d{1,2}))?-(?:opus|sonnet|haiku))(?:-|$)/.exec(id)
  if (!m) return undefined
  const major = Number(m[1] ?? m[3])
  const minor = Number(m[2] ?? m[4] ?? 0)
  return major + minor / 10
}

/** Tokens served so cost against the standard price, for the model Anthropic was sent. */
export function premiumFactor(upstreamId: string, u: Premiums): number {
  let f = 1
  const base = baseClaudeId(upstreamId)
  if (u.speed === 'fast') f *= FAST.get(base) ?? UNLISTED_FAST
  if (u.inferenceGeo === 'us') {
    const v = version(base)
    // an id that says no version is held and billed as a newer model's
    if (v === undefined || v >= 4.6) f *= US_ONLY
  }
  return f
}

/** What a Claude request is held at by what it asks for (`speed`, `inference_geo`). */
export function heldPremiums(body: { speed?: unknown; inference_geo?: unknown }): Premiums | undefined {
  const out: Premiums = {}
  if (body.speed === 'fast') out.speed = 'fast'
  if (body.inference_geo !== 'global') out.inferenceGeo = 'us'
  return out
}

/** A usage's `speed` and `inference_geo` as Anthropic says them, in IR terms (what is not priced apart left out). */
export function premiumsOf(u: { speed?: unknown; inference_geo?: unknown }): Premiums {
  const out: Premiums = {}
  if (u.speed === 'fast') out.speed = 'fast'
  if (u.inference_geo === 'us') out.inferenceGeo = 'us'
  return out
}
