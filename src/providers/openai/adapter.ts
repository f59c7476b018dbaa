// The OpenAI chat-completions upstream (`POST {baseUrl}/chat/completions`), for the three
// kinds that speak it: `openai`; `openai-compatible` (another server: its missing usage is
// counted here, counted-usage.ts); `azure-openai` (`/openai/deployments/{upstream id}/…` with
// `?api-version=`, the key in `api-key`). The Responses API passes through where the provider
// serves it (`responses`); elsewhere the responses surface is served over chat completions.
import type { GenerationRequest, GenerationResponse, StreamEvent } from '../../ir/types.ts'
import { commitFirst } from '../commit.ts'
import { bodyOf, callUpstream, readJson, withCallHeaders, type Transport, type UpstreamAuth, type UpstreamRequest } from '../http.ts'
import type { Watch } from '../idle.ts'
import { KeyPool } from '../key-pool.ts'
import type { AdapterOptions } from '../options.ts'
import { parseSse } from '../sse.ts'
import type { CallContext, Passthrough, ProviderAdapter, ProviderConfig, ProviderKind, Wire } from '../types.ts'
import { withCountedUsage } from './counted-usage.ts'
import { chatPromptText, openAIChatTap } from './tap.ts'
import { openAIResponsesTap, responsesPromptText } from './responses-tap.ts'
import { toOpenAIChat } from './request.ts'
import { fromOpenAIChat, type ChatCompletion } from './response.ts'
import { openAIChatEvents } from './stream.ts'
import { longNamesIn, longNamesOf, shortToolNames } from './tool-names.ts'

export class OpenAIAdapter implements ProviderAdapter {
  readonly kind: ProviderKind
  readonly name: string
  /** The wires passed through: chat always, the Responses API where the provider serves it. */
  readonly passthrough: Partial<Record<Wire, Passthrough>>
  private readonly auth: UpstreamAuth
  private readonly azure: boolean

  private readonly transport?: Transport

  constructor(private readonly config: ProviderConfig, opts: AdapterOptions = {}) {
    this.transport = opts.transport
    this.name = config.name
    this.kind = config.kind
    this.azure = config.kind === 'azure-openai'
    const pool = new KeyPool(config.id, config.apiKeys, opts.position, opts.log)
    this.auth = { pool, headers: this.azure ? (key) => ({ 'api-key': key }) : (key) => ({ authorization: `Bearer ${key}` }) }
    const passthrough: Partial<Record<Wire, Passthrough>> = {
      // The chat wire's fast path: the validated client body goes upstream as is (only the
      // model is replaced by the upstream id), with the same retries and error mapping.
      'openai.chat': {
        // the client's own body: one string, as it came (the hot path pays for no size check)
        call: (body, ctx, accept) => this.call(CHAT, { ...body, messages: withoutThinking(body.messages, this.kind), model: ctx.model.upstreamId }, ctx, accept, JSON.stringify),
        tap: (opts) => openAIChatTap(opts, this.kind === 'openai'),
        promptText: chatPromptText,
      },
    }
    // The Responses API (`POST {baseUrl}/responses`): the responses surface's upstream. Its
    // body may carry a whole thread the gateway loaded: encoded in parts when it is long.
    if (config.responses) {
      passthrough['openai.responses'] = {
        call: (body, ctx, accept) => this.call(RESPONSES, { ...body, model: ctx.model.upstreamId }, ctx, accept, (json) => ({ json })),
        tap: (opts) => openAIResponsesTap(opts, this.kind === 'openai'),
        promptText: responsesPromptText,
      }
    }
    this.passthrough = passthrough
  }

  private headers(stream: boolean): Record<string, string> {
    return { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' }
  }

  /** Where a call goes: the API's own path, or Azure's (the deployment in the path, the version in the query). */
  private path(api: Api, ctx: CallContext): string {
    if (!this.azure) return api
    const version = `api-version=${encodeURIComponent(this.config.apiVersion ?? '')}`
    if (api === RESPONSES) return `/openai${api}?${version}`
    return `/openai/deployments/${encodeURIComponent(ctx.model.upstreamId)}${api}?${version}`
  }

  /** A compatible server's chat reply without usage gets the gateway's count before it is read. */
  private counting<T>(api: Api, body: Record<string, unknown>, ctx: CallContext, accept: (res: Response, idle: Watch) => Promise<T>): (res: Response, idle: Watch) => Promise<T> {
    if (this.kind !== 'openai-compatible' || api !== CHAT) return accept
    return async (res, idle) => accept(await withCountedUsage(res, () => chatPromptText(body), ctx.lane), idle)
  }

  async generate(req: GenerationRequest, ctx: CallContext): Promise<GenerationResponse> {
    const named = shortToolNames(req)
    const body = this.chatBody({ ...named.req, stream: false }, ctx)
    const res = await this.call(CHAT, body, ctx, async (res) => fromOpenAIChat((await readJson(res, this.config.name)) as ChatCompletion, this.kind === 'openai'), (json) => ({ json }))
    return named.back ? longNamesIn(res, named.back) : res
  }

  async stream(req: GenerationRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    const named = shortToolNames(req)
    const body = this.chatBody({ ...named.req, stream: true }, ctx)
    const events = await this.call(CHAT, body, ctx, async (res, idle) => commitFirst(openAIChatEvents(parseSse(bodyOf(res, this.config.name), idle), this.kind === 'openai', ctx.unsent)), (json) => ({ json }))
    return named.back ? longNamesOf(events, named.back) : events
  }

  private chatBody(req: GenerationRequest, ctx: CallContext): Record<string, unknown> {
    const { body, leftOut } = toOpenAIChat(req, { upstreamId: ctx.model.upstreamId, reasoning: ctx.model.reasoning, compatible: this.kind === 'openai-compatible' })
    if (leftOut.length > 0) ctx.leftOut?.(leftOut)
    return body
  }

  private call<T>(
    api: Api,
    body: Record<string, unknown>,
    ctx: CallContext,
    accept: (res: Response, idle: Watch) => Promise<T>,
    encode: (json: Record<string, unknown>) => UpstreamRequest<T>['body'],
  ): Promise<T> {
    return callUpstream({
      provider: this.config,
      path: this.path(api, ctx),
      headers: withCallHeaders(this.headers(body.stream === true), ctx),
      body: encode(body),
      signal: ctx.signal,
      accept: this.counting(api, body, ctx, accept),
      auth: this.auth,
      transport: this.transport,
      ctx,
    })
  }
}

const CHAT = '/chat/completions'
const RESPONSES = '/responses'
type Api = typeof CHAT | typeof RESPONSES

/**
 * The messages without the fields a chat reply gives a Claude model's thinking, when a
 * conversation begun with one goes on here: OpenAI's schema has neither and refuses them; a
 * compatible server may read `reasoning_content` (DeepSeek's own field) but none knows
 * `thinking_blocks`. As they are when no message carries them (the usual case: nothing copied).
 */
function withoutThinking(messages: unknown, kind: ProviderKind): unknown {
  const fields = kind === 'openai-compatible' ? COMPATIBLE_UNKNOWN : OPENAI_UNKNOWN
  const has = (m: unknown) => typeof m === 'object' && m !== null && fields.some((k) => Object.hasOwn(m, k))
  if (!Array.isArray(messages) || !messages.some(has)) return messages
  return messages.map((m) => {
    if (!has(m)) return m
    const out = { ...(m as Record<string, unknown>) }
    for (const k of fields) delete out[k]
    return out
  })
}

const OPENAI_UNKNOWN = ['reasoning_content', 'thinking_blocks'] as const
const COMPATIBLE_UNKNOWN = ['thinking_blocks'] as const
