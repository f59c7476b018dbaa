// Pure mappings around a generation record: what the recorder stores (GenerationInput →
// row), what the hourly rollup adds for it, and what the lookup route shows (row → wire).
import type { generations } from '../db/schema.ts'
import type { Usage } from '../ir/types.ts'
import { extrasOf, extrasSums, extrasWire, type ExtrasSum } from './extras.ts'
import type { GenerationInput, UpstreamAttempt } from './types.ts'

export type GenerationRow = typeof generations.$inferSelect

export const HOUR_MS = 3_600_000

/** A counter from a surface may be missing, fractional or negative after a bad upstream; store a sane integer. */
function count(n: number | undefined | null): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0
}

/** Tokens one bucket of one reply may count: past any model's context (the largest are a few million). */
export const MOST_TOKENS = 10_000_000
/** Web or file searches one reply may have run. */
export const MOST_SEARCHES = 10_000

const COUNTS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens', 'cacheWrite1hTokens', 'inputAudioTokens', 'outputAudioTokens', 'webSearches', 'fileSearches'] as const

/**
 * The usage an upstream reported, with each count no reply can have (not a finite number,
 * negative, or past MOST_TOKENS: an upstream's `1e308` made one reply cost 7.5e301 and its key
 * spent for ever) taken as 0, named in `implausible`; the same object when every count is sane.
 */
export function plausibleUsage(u: Usage): { usage: Usage; implausible: string[] } {
  const implausible: string[] = []
  let out: Usage | undefined
  for (const k of COUNTS) {
    const v = u[k]
    if (v === undefined) continue
    const most = k === 'webSearches' || k === 'fileSearches' ? MOST_SEARCHES : MOST_TOKENS
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= most) continue
    implausible.push(k)
    out ??= { ...u }
    out[k] = 0
  }
  return { usage: out ?? u, implausible }
}

/**
 * The gateway's own record id. Time-ordered (UUIDv7) and random, so it never collides with
 * another record, whatever id an upstream hands out.
 */
export function newGenerationId(): string {
  return 'gen-' + Bun.randomUUIDv7().replaceAll('-', '')
}

/**
 * The stored row, under the gateway's own `id`; the client's id is kept as `replyId`. `cost`
 * is null exactly when the model has no known price: such a record is flagged unpriced,
 * never counted as $0.
 */
export function toRow(input: GenerationInput, cost: number | null, id: string = newGenerationId()): GenerationRow {
  const u = input.usage
  const cacheRead = count(u.cacheReadTokens)
  const cacheWrite = count(u.cacheWriteTokens)
  // OpenAI's prompt_tokens convention: uncached input plus cache reads and writes
  const prompt = count(u.inputTokens) + cacheRead + cacheWrite
  const completion = count(u.outputTokens)
  const priced = cost !== null && Number.isFinite(cost)
  return {
    id,
    replyId: typeof input.id === 'string' ? input.id : '',
    apiKeyId: input.apiKey.id,
    account: input.apiKey.account,
    endpoint: input.endpoint,
    stream: input.stream,
    model: input.model.id,
    provider: input.provider ?? input.model.deployments[0]?.provider ?? input.model.provider,
    createdAt: Number.isFinite(input.createdAt) ? Math.floor(input.createdAt) : Date.now(),
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    cacheCreationInputTokens: cacheWrite,
    cacheReadInputTokens: cacheRead,
    reasoningTokens: u.reasoningTokens === undefined ? null : count(u.reasoningTokens),
    finishReason: input.finishReason ?? null,
    status: input.status ?? null,
    cost: priced ? Math.max(0, cost) : null,
    unpriced: !priced,
    latencyMs: Number.isFinite(input.latencyMs) ? Math.max(0, Math.round(input.latencyMs)) : null,
    ttftMs: input.ttftMs !== null && Number.isFinite(input.ttftMs) ? Math.max(0, Math.round(input.ttftMs)) : null,
    error: input.error ?? null,
    httpStatus: input.httpStatus ?? null,
    batchId: input.batchId ?? null,
    deployment: input.deployment ?? null,
    attempts: input.attempts && input.attempts.length > 0 ? JSON.stringify(input.attempts) : null,
    usageCounted: u.counted === true,
    cached: input.cached === true,
    replayed: input.replayed !== undefined,
    // how it was served, in the reply's words; where it never said (a dropped stream, billed as
    // the request asked), the mode its cost counts
    serviceTier: u.served?.serviceTier ?? u.serviceTier ?? null,
    speed: u.served?.speed ?? u.speed ?? null,
    inferenceGeo: u.served?.inferenceGeo ?? u.inferenceGeo ?? null,
    // what else its cost counts (searches, audio, the image tool…); null for a reply with none
    usageExtras: extrasOf(u),
  }
}

/** The stored attempts, or [] for a record that has none (or from before they were kept). */
export function attemptsOf(row: Pick<GenerationRow, 'attempts'>): UpstreamAttempt[] {
  if (row.attempts === null) return []
  try {
    const v: unknown = JSON.parse(row.attempts)
    return Array.isArray(v) ? (v as UpstreamAttempt[]) : []
  } catch {
    return []
  }
}

/** UTC hour start of an epoch-ms instant (epoch ms has no leap seconds, so plain arithmetic is exact). */
export function hourStart(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS
}

export interface RollupDelta extends Record<ExtrasSum, number> {
  account: string
  model: string
  hour: number
  requests: number
  inputTokens: number
  outputTokens: number
  totalTokens: number
  cost: number
  unpricedRequests: number
  cacheReadTokens: number
  cacheWriteTokens: number
  reasoningTokens: number
}

/** What one stored record adds to `usage_hourly`: input = prompt tokens incl. cache, output = completion. */
export function toRollup(row: GenerationRow): RollupDelta {
  return {
    account: row.account,
    model: row.model,
    hour: hourStart(row.createdAt),
    requests: 1,
    inputTokens: row.promptTokens,
    outputTokens: row.completionTokens,
    totalTokens: row.totalTokens,
    cost: row.cost ?? 0,
    unpricedRequests: row.unpriced ? 1 : 0,
    // parts of the input and output above, so each token still counts once
    cacheReadTokens: row.cacheReadInputTokens,
    cacheWriteTokens: row.cacheCreationInputTokens,
    reasoningTokens: row.reasoningTokens ?? 0,
    // what else its cost counts: parts of the above (hour writes, audio) or beside them
    ...extrasSums(row.usageExtras),
  }
}

/** The rollup's counters, which add up; the rest of a delta is its key. */
export const ROLLUP_COUNTERS = ['requests', 'inputTokens', 'outputTokens', 'totalTokens', 'cost', 'unpricedRequests', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens',
  'cacheWrite1hTokens', 'inputAudioTokens', 'outputAudioTokens', 'webSearchRequests', 'fileSearchRequests', 'imageToolTokens'] as const satisfies readonly (keyof RollupDelta)[]

export function addRollup(into: RollupDelta, d: RollupDelta): void {
  for (const c of ROLLUP_COUNTERS) into[c] += d[c]
}

/** The `generation` object of `GET /api/v1/generations` (plus cost and timings). */
export function toWire(row: GenerationRow) {
  const usage: Record<string, unknown> = {
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    total_tokens: row.totalTokens,
    cache_creation_input_tokens: row.cacheCreationInputTokens,
    cache_read_input_tokens: row.cacheReadInputTokens,
  }
  if (row.reasoningTokens !== null) usage.completion_tokens_details = { reasoning_tokens: row.reasoningTokens }
  // what else the cost counts, where the reply had any: absent otherwise
  const extras = extrasWire(row.usageExtras)
  if (extras) Object.assign(usage, extras)
  // the upstream reported none: these are the gateway's own count
  if (row.usageCounted) usage.counted_by_gateway = true
  const out: Record<string, unknown> = {
    // the generation id is the one from the reply; the gateway's own id is beside it
    id: row.replyId || row.id,
    gateway_id: row.id,
    endpoint: row.endpoint,
    stream: row.stream,
    model: row.model,
    created_at: Math.floor(row.createdAt / 1000),
    apiKeyId: row.apiKeyId,
    usage,
    finish_reason: row.finishReason,
  }
  // status is present for responses-style generations only
  if (row.status !== null) out.status = row.status
  out.cost = row.cost
  out.unpriced = row.unpriced
  // how the reply was served, which its cost counts (null: the upstream did not say)
  out.service_tier = row.serviceTier
  out.speed = row.speed
  out.inference_geo = row.inferenceGeo
  out.latency_ms = row.latencyMs
  out.time_to_first_token_ms = row.ttftMs
  if (row.error !== null) out.error = row.error
  if (row.batchId !== null) out.batch_id = row.batchId
  // which provider served and what was tried before it
  out.provider = row.provider
  if (row.deployment !== null) out.deployment = row.deployment
  out.attempts = attemptsOf(row)
  // answered from the response cache, at no cost
  if (row.cached) out.cached = true
  // answered from a cassette (src/replay)
  if (row.replayed) out.replayed = true
  return out
}
