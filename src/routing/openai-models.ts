// What each OpenAI model takes where models differ, so that a body written for one is a 400 of
// another: the processing tiers that serve it, a 24-hour prompt cache, a verbosity other than
// medium. Read by the id a model is sent as, where a body goes to a model it was not written for
// (routing/fallback-fit.ts). Facts of OpenAI's guides and 400s; the AI SDK's model catalog says
// the same of the tiers.
import type { Lack } from '../config/models.ts'
import { undated } from '../config/service-tiers.ts'

/** GPT-5 and later; GPT-5's first chat models (`gpt-5-chat-latest`); the nano ones; the o-series from o3 on. */
const GPT5_ON = /^gpt-([5-9]|\d\d)/
const GPT_CHAT = /^gpt-\d+-chat/
const GPT_NANO = /^gpt-\d+(\.\d+)?-nano/
const O3_ON = /^o([3-9]|\d\d)/

/**
 * The processing tiers a model is served at (OpenAI's 400 otherwise: "Unsupported service_tier:
 * flex"): flex the o3 generation and later and GPT-5 and later but its chat models; priority
 * (fast mode, its new name) those and the GPT-4 models, but not GPT-5's nano ones.
 */
const atFlex = (id: string) => O3_ON.test(id) || (GPT5_ON.test(id) && !GPT_CHAT.test(id))
const atPriority = (id: string) => id.startsWith('gpt-4') || O3_ON.test(id) || (GPT5_ON.test(id) && !GPT_NANO.test(id) && !GPT_CHAT.test(id))
const TIER_SERVES: Record<string, (id: string) => boolean> = { flex: atFlex, priority: atPriority, fast: atPriority }

/** Whether `id` is served at the processing tier `tier`; true for a tier this table does not know (`auto`, `default`). */
export const servesTier = (tier: string, id: string): boolean => !Object.hasOwn(TIER_SERVES, tier) || TIER_SERVES[tier]!(id)

/**
 * The models OpenAI keeps a prompt cache 24 hours for (`prompt_cache_retention: "24h"`), by its
 * prompt caching guide's list; from GPT-5.6 on the field is refused whatever its value
 * (`prompt_cache_options.ttl` took its place).
 */
const EXTENDED_RETENTION = new Set(['gpt-5.5', 'gpt-5.5-pro', 'gpt-5.4', 'gpt-5.2', 'gpt-5.1-codex-max', 'gpt-5.1', 'gpt-5.1-codex', 'gpt-5.1-codex-mini', 'gpt-5.1-chat-latest', 'gpt-5', 'gpt-5-codex', 'gpt-4.1'])
const RETENTION_GONE = /^gpt-(5\.([6-9]|\d\d)|[6-9]|\d\d)/

/** Whether `id` takes the prompt cache retention `value`. */
export const takesRetention = (value: unknown, id: string): boolean => !RETENTION_GONE.test(id) && (value !== '24h' || EXTENDED_RETENTION.has(undated(id)))

/**
 * Whether `id` takes the verbosity `value`: medium is every model's, the others GPT-5's and
 * later's (gpt-4o: "Unsupported value: 'verbosity' does not support 'low' with this model.
 * Supported values are: 'medium'"; Codex sends `text.verbosity` for its GPT-5 models).
 */
export const takesVerbosity = (value: unknown, id: string): boolean => value === 'medium' || GPT5_ON.test(id)

const GPT51_ON = /^gpt-(5\.([1-9]|\d\d)|[6-9]|\d\d)/

/**
 * Of the tools GPT-5 brought, those `id` does not take: custom (freeform) tools are GPT-5's and
 * later's, the apply_patch and shell tools GPT-5.1's and later's. Codex sends its apply_patch as
 * a custom tool; an older fallback refuses it with a 400, which the client would take as final.
 */
export function lacksOfGeneration(id: string): Lack[] {
  if (GPT51_ON.test(id)) return []
  return GPT5_ON.test(id) ? ['patch-and-shell'] : ['custom-tools', 'patch-and-shell']
}
