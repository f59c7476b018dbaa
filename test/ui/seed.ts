// Generation records for the dashboard tests, written as the recorder writes them (row and
// hourly rollup together), over the last hours, so that the expected chart can be computed
// from the same list.
import { hourStart, HOUR_MS, type GenerationRow } from '../../src/generations/row.ts'
import type { Services } from '../../src/services.ts'

export interface Seed {
  keyId: string
  account: string
  model: string
  provider: string
  /** Whole hours before the current one (the records start a minute into that hour)... */
  hoursAgo?: number
  /** ...or this instant (epoch ms). */
  at?: number
  count: number
  errors?: number
  /** USD per request; null: unpriced. */
  cost: number | null
  latencyMs?: number
  /** How the replies were served, as an upstream says it (OpenAI's `service_tier`). */
  serviceTier?: string
  /** A failed record's error text (default: an upstream's 500). */
  errorText?: string
  /** Fast mode, as an upstream says it (Anthropic's `speed`). */
  speed?: string
  inferenceGeo?: string
  /** The priced extras of its usage, as the column stores them (generations/extras.ts). */
  usageExtras?: string
}

export async function seedRecords(s: Services, seeds: Seed[], now = Date.now()): Promise<GenerationRow[]> {
  const rows: GenerationRow[] = []
  for (const sd of seeds) {
    for (let i = 0; i < sd.count; i++) {
      const failed = i < (sd.errors ?? 0)
      rows.push({
        id: 'gen-seed' + Bun.randomUUIDv7().replaceAll('-', ''),
        replyId: `chatcmpl-seed-${rows.length}`,
        apiKeyId: sd.keyId,
        account: sd.account,
        endpoint: sd.model.includes('claude') ? 'anthropic.messages' : 'openai.chat.completions',
        stream: i % 2 === 0,
        model: sd.model,
        provider: sd.provider,
        createdAt: (sd.at ?? hourStart(now) - (sd.hoursAgo ?? 1) * HOUR_MS + 60_000) + i,
        promptTokens: 100 + i,
        completionTokens: 20,
        totalTokens: 120 + i,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 10,
        reasoningTokens: null,
        finishReason: failed ? null : 'stop',
        status: null,
        cost: sd.cost,
        unpriced: sd.cost === null,
        latencyMs: (sd.latencyMs ?? 200) + i,
        ttftMs: 50,
        error: failed ? (sd.errorText ?? 'upstream answered 500') : null,
        httpStatus: failed ? 500 : 200,
        batchId: null,
        deployment: null,
        attempts: null,
        usageCounted: false,
        cached: false,
        replayed: false,
        serviceTier: sd.serviceTier ?? null,
        speed: sd.speed ?? null,
        inferenceGeo: sd.inferenceGeo ?? null,
        usageExtras: sd.usageExtras ?? null,
      })
    }
  }
  const store = s.recorder.store
  await s.storage.sql.tx((q) => store.insertRows(rows, q))
  return rows
}

/** Requests per (bucket ISO timestamp, model), hourly buckets. */
export function expectedHourly(rows: Pick<GenerationRow, 'createdAt' | 'model'>[]): Map<string, number> {
  const m = new Map<string, number>()
  for (const r of rows) {
    const k = `${new Date(hourStart(r.createdAt)).toISOString()}|${r.model}`
    m.set(k, (m.get(k) ?? 0) + 1)
  }
  return m
}
