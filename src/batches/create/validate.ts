// One batch item — a JSONL line or an inline request — checked before the batch is accepted:
// its envelope (a bare body with an optional `custom_id`, an OpenAI batch line
// `{custom_id, method, url, body}`, or Anthropic's `{custom_id, params}`), then the body
// through its surface's own checks, exactly those an interactive request meets before any
// upstream call. Every problem is a 400 that names the line or item.
import { HttpError } from '../../http/errors.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { filesBound } from '../../pipeline/generate.ts'
import { decodeContext, type DecodeContext, type SurfaceSpec } from '../../pipeline/surface.ts'
import { typeName } from '../../routing/router.ts'
import type { GenerationServices } from '../../services.ts'
import type { BatchFamily } from '../types.ts'
import { isObj } from '../../lib/json.ts'
import { beyondText } from '../item-hold.ts'
import { conversationOf } from '../../surfaces/responses/conversation-of.ts'

export interface CheckedItem {
  customId: string | null
  /** The target endpoint's body, JSON. */
  body: string
  /** The model as the body names it. */
  model: string
  /** Admission's estimates, by the pipeline's own rule. */
  promptEstimate: number
  maxOutputTokens: number | null
  /** Chat's `n` past one: each choice may take the whole cap. */
  choices: number | null
  /** The tier it is held at, where that is priced apart (null: standard). */
  serviceTier: string | null
  /** What its server tools (or an answer in audio) may add beyond its prompt and cap, and the price its prompt can take, JSON (item-hold.ts); null: nothing, at most an hour's cache write. */
  beyond: string | null
}

type Obj = Record<string, unknown>

const ANTHROPIC_CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/
const MAX_CUSTOM_ID = 512
const BATCH_LINE_FIELDS = new Set(['custom_id', 'method', 'url', 'body'])

class Bad extends Error {}

/**
 * What an item of an endpoint continues that takes one turn at a time (a responses turn's
 * conversation): a batch's items run at once and in no order, so two of one batch would both
 * continue it from the same turn, neither seeing the other, and be added to it in any order.
 */
const ONE_TURN_PER_BATCH: Partial<Record<string, (body: Obj) => string | undefined>> = {
  '/v1/responses': conversationOf,
}


export class ItemChecker {
  /** custom_id → where it was first seen: ids are unique within a batch. */
  private readonly seen = new Map<string, string>()
  /** conversation → the item that continues it (ONE_TURN_PER_BATCH). */
  private readonly turns = new Map<string, string>()

  constructor(
    private readonly s: Pick<GenerationServices, 'catalog' | 'config' | 'files'>,
    private readonly spec: SurfaceSpec,
    private readonly family: BatchFamily,
    private readonly endpoint: string,
    private readonly rc: RequestContext,
  ) {
    // items name their own models: the creating request is not logged under any of them
    this.cx = decodeContext(s.catalog, s.config.compat.crossFamily, { ...rc, accessLog: undefined })
  }

  private readonly cx: DecodeContext

  /** The item, checked; `where` ("line 3", "requests[2]") prefixes every 400. */
  async check(raw: unknown, where: string): Promise<CheckedItem> {
    try {
      const { customId, body } = this.family === 'anthropic' ? this.anthropicItem(raw) : this.openaiItem(raw)
      if (customId !== null) {
        const first = this.seen.get(customId)
        if (first !== undefined) throw new Bad(`custom_id "${customId.slice(0, 64)}" is already used by ${first}`)
        this.seen.set(customId, where)
      }
      this.oneTurn(body, where)
      return { customId, body: JSON.stringify(body), ...(await this.surfaceCheck(body)) }
    } catch (e) {
      if (e instanceof Bad) throw new HttpError(400, `${where}: ${e.message}`)
      if (e instanceof HttpError) throw new HttpError(e.status, `${where}: ${e.message}`)
      throw new HttpError(400, `${where}: could not be checked: ${(e as Error)?.message ?? String(e)}`)
    }
  }

  private oneTurn(body: Obj, where: string): void {
    const conversation = ONE_TURN_PER_BATCH[this.endpoint]?.(body)
    if (conversation === undefined) return
    const first = this.turns.get(conversation)
    if (first !== undefined) {
      throw new Bad(`conversation: ${first} continues "${conversation.slice(0, 80)}" too; a batch's items run at once and in no order, so each would continue it from the same turn: send one turn of a conversation per batch (the next once this one has ended)`)
    }
    this.turns.set(conversation, where)
  }

  private async surfaceCheck(raw: Obj): Promise<Omit<CheckedItem, 'customId' | 'body'>> {
    const { spec, s } = this
    const plan = await spec.decode(raw, this.cx)
    const cap = plan.maxOutputTokens
    const files = this.rc.apiKey.credits !== null ? await filesBound(s, plan, this.rc) : 0
    const choices = typeof plan.choices === 'number' && plan.choices > 1 ? plan.choices : null
    return { model: plan.body.model as string, promptEstimate: plan.promptTokens() + files, maxOutputTokens: typeof cap === 'number' ? cap : null, choices, serviceTier: plan.serviceTier ?? null, beyond: beyondText(plan.beyond, plan.promptWrites(), plan.premiums) }
  }

  private customId(v: unknown, max: number): string {
    if (typeof v !== 'string' || v === '') throw new Bad(`custom_id: expected a non-empty string, got ${typeName(v)}`)
    if (v.length > max) throw new Bad(`custom_id: longer than ${max} characters`)
    return v
  }

  private openaiItem(raw: unknown): { customId: string | null; body: Obj } {
    if (!isObj(raw)) throw new Bad(`expected a JSON object (a request body, or {custom_id, method, url, body}), got ${typeName(raw)}`)
    const customId = raw.custom_id === undefined || raw.custom_id === null ? null : this.customId(raw.custom_id, MAX_CUSTOM_ID)
    if ('body' in raw && ('url' in raw || 'method' in raw)) {
      const extra = Object.keys(raw).filter((k) => !BATCH_LINE_FIELDS.has(k))
      if (extra.length > 0) throw new Bad(`${extra.map((k) => k.slice(0, 64)).join(', ')}: unknown field of a batch line; allowed: custom_id, method, url, body`)
      if (raw.method !== undefined && raw.method !== 'POST') throw new Bad(`method: must be "POST"`)
      if (raw.url !== undefined && raw.url !== this.endpoint) throw new Bad(`url: "${String(raw.url).slice(0, 80)}" is not the batch's endpoint ${this.endpoint}`)
      if (!isObj(raw.body)) throw new Bad(`body: expected the request body object, got ${typeName(raw.body)}`)
      return { customId, body: raw.body }
    }
    if (customId === null) return { customId, body: raw }
    const { custom_id: _, ...body } = raw
    return { customId, body }
  }

  private anthropicItem(raw: unknown): { customId: string; body: Obj } {
    if (!isObj(raw)) throw new Bad(`expected {custom_id, params}, got ${typeName(raw)}`)
    const extra = Object.keys(raw).filter((k) => k !== 'custom_id' && k !== 'params')
    if (extra.length > 0) throw new Bad(`${extra.map((k) => k.slice(0, 64)).join(', ')}: unknown field; a request is {custom_id, params}`)
    const customId = this.customId(raw.custom_id, 64)
    if (!ANTHROPIC_CUSTOM_ID.test(customId)) throw new Bad('custom_id: 1 to 64 letters, digits, _ or -')
    if (raw.params === undefined) throw new Bad('params: required')
    if (!isObj(raw.params)) throw new Bad(`params: expected the Messages request body, got ${typeName(raw.params)}`)
    return { customId, body: raw.params }
  }
}
