// What a new OpenAI code-interpreter container is billed, by its memory tier. OpenAI prices a
// container session by the memory it asks for (`container.memory_limit`: 1g, the default, 4g,
// 16g or 64g): $0.03, $0.12, $0.48 and $1.92 a 20-minute session (its API pricing page, built-in
// tools, https://developers.openai.com/api/docs/pricing#built-in-tools, as summaries of it quote
// it, e.g. simoncarter.ai's note on the June change: 4 GB $0.12, 64 GB $1.92). Since 2026-06-02 it bills
// "eligible" sessions per minute at the same rate with a 5-minute minimum (its changelog,
// https://developers.openai.com/api/docs/changelog, Jun 2): how long a session ran no reply says,
// so a new container is counted at the full 20-minute session, the dearer reading (what a
// session of 20 minutes, or one not eligible, is billed). A container kept busy past 20 minutes
// is billed more than that; one reused by id (or by auto mode) is not new and counts nothing.
// Anthropic's code execution is billed by container-hours past an allowance the organization
// shares, which no usage of a reply reports: not counted here.
type Obj = Record<string, unknown>

export type ContainerTier = '1g' | '4g' | '16g' | '64g'

/** New containers a reply made, by memory tier. */
export type ContainerCounts = Partial<Record<ContainerTier, number>>

/** USD a container session of each tier (20 minutes). */
export const CONTAINER_USD: Readonly<Record<ContainerTier, number>> = { '1g': 0.03, '4g': 0.12, '16g': 0.48, '64g': 1.92 }

/** The tiers, cheapest first. */
export const TIERS = Object.keys(CONTAINER_USD) as ContainerTier[]

/** Containers one reply may be counted to have made: past any reply's tool calls. */
export const MOST_CONTAINERS = 100

const isTier = (v: unknown): v is ContainerTier => typeof v === 'string' && Object.hasOwn(CONTAINER_USD, v)

/**
 * The memory tier of a Responses `code_interpreter` tool that makes a new container
 * (`container: { type: "auto", memory_limit? }`, or none given: auto); undefined for any other
 * tool or a container named by id. A limit OpenAI does not list is taken as the dearest.
 */
export function newContainerTier(tool: unknown): ContainerTier | undefined {
  if (typeof tool !== 'object' || tool === null || (tool as Obj).type !== 'code_interpreter') return undefined
  const c = (tool as Obj).container
  if (typeof c === 'string') return undefined
  const limit = typeof c === 'object' && c !== null ? (c as Obj).memory_limit : undefined
  if (limit === undefined || limit === null) return '1g'
  return isTier(limit) ? limit : '64g'
}

/** The dearest new-container tier among a request's tools, or undefined when none makes one. */
export function dearestNewTier(tools: unknown): ContainerTier | undefined {
  if (!Array.isArray(tools)) return undefined
  let most: ContainerTier | undefined
  for (const t of tools) {
    const tier = newContainerTier(t)
    if (tier && (most === undefined || CONTAINER_USD[tier] > CONTAINER_USD[most])) most = tier
  }
  return most
}

/** A count as kept: a whole number from 1 to MOST_CONTAINERS, else 0. */
export const containerCount = (n: unknown): number => (typeof n === 'number' && Number.isInteger(n) && n > 0 ? Math.min(n, MOST_CONTAINERS) : 0)

/** The counts a stored or received value holds, by known tier and sane count only; none: undefined. */
export function containerCounts(v: unknown): ContainerCounts | undefined {
  if (typeof v !== 'object' || v === null) return undefined
  let out: ContainerCounts | undefined
  for (const tier of TIERS) {
    const n = containerCount((v as Record<string, unknown>)[tier])
    if (n > 0) out = { ...out, [tier]: n }
  }
  return out
}

/** USD of the new containers counted. */
export function containersUsd(counts: ContainerCounts | undefined): number {
  if (!counts) return 0
  let usd = 0
  for (const tier of TIERS) usd += containerCount(counts[tier]) * CONTAINER_USD[tier]
  return usd
}

/** `counts` with one more container of `tier`. */
export function addContainer(counts: ContainerCounts | undefined, tier: ContainerTier, n = 1): ContainerCounts {
  return { ...counts, [tier]: containerCount((counts?.[tier] ?? 0) + n) }
}
