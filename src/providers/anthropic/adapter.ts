// The Anthropic messages upstream (`POST {baseUrl}/v1/messages`).
import type { GenerationRequest, GenerationResponse, StreamEvent } from '../../ir/types.ts'
import { commitFirst } from '../commit.ts'
import { bodyOf, callUpstream, readJson, withCallHeaders, type Transport, type UpstreamAuth } from '../http.ts'
import { KeyPool } from '../key-pool.ts'
import type { AdapterOptions } from '../options.ts'
import { spellGatewayParams } from './gateway-params.ts'
import { parseSse } from '../sse.ts'
import { UpstreamError, type CallContext, type Passthrough, type ProviderAdapter, type ProviderConfig, type Wire } from '../types.ts'
import { anthropicMessagesTap } from './tap.ts'
import { FILES_BETA, toAnthropicMessages } from './request.ts'
import { fromAnthropicMessage, type AnthropicMessage } from './response.ts'
import { countOf } from '../counts.ts'
import { anthropicEvents } from './stream.ts'
import { tellContainer } from './container.ts'

export const ANTHROPIC_VERSION = '2023-06-01'

export class AnthropicAdapter implements ProviderAdapter {
  readonly kind = 'anthropic' as const
  readonly name: string
  private readonly auth: UpstreamAuth

  private readonly transport?: Transport

  constructor(private readonly config: ProviderConfig, opts: AdapterOptions = {}) {
    this.transport = opts.transport
    this.name = config.name
    this.auth = { pool: new KeyPool(config.id, config.apiKeys, opts.position, opts.log), headers: (key) => ({ 'x-api-key': key }) }
  }

  private headers(stream: boolean, betas: string[]): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
    }
    if (betas.length) h['anthropic-beta'] = [...new Set(betas)].join(',')
    return h
  }

  async generate(req: GenerationRequest, ctx: CallContext): Promise<GenerationResponse> {
    const { body, betas, leftOut, replyTool } = toAnthropicMessages({ ...req, stream: false }, ctx.model, ctx.fallback)
    if (leftOut.length > 0) ctx.leftOut?.(leftOut)
    return callUpstream({
      provider: this.config,
      path: '/v1/messages',
      headers: withCallHeaders(this.headers(false, [...betas, ...(ctx.betas ?? [])]), ctx),
      body: { json: body },
      signal: ctx.signal,
      auth: this.auth,
      transport: this.transport,
      ctx,
      accept: async (res) => {
        const j = (await readJson(res, this.config.name)) as AnthropicMessage & { container?: unknown }
        tellContainer(j?.container, ctx.containerGiven)
        return fromAnthropicMessage(j, replyTool)
      },
    })
  }

  async stream(req: GenerationRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    const { body, betas, leftOut, replyTool } = toAnthropicMessages({ ...req, stream: true }, ctx.model, ctx.fallback)
    if (leftOut.length > 0) ctx.leftOut?.(leftOut)
    return callUpstream({
      provider: this.config,
      path: '/v1/messages',
      headers: withCallHeaders(this.headers(true, [...betas, ...(ctx.betas ?? [])]), ctx),
      body: { json: body },
      signal: ctx.signal,
      auth: this.auth,
      transport: this.transport,
      ctx,
      accept: async (res, idle) => commitFirst(anthropicEvents(parseSse(bodyOf(res, this.config.name), idle), this.config.name, ctx.containerGiven, ctx.unsent, replyTool, () => idle.begun())),
    })
  }

  /**
   * The messages wire's fast path: the validated body goes upstream as is (model replaced
   * by the upstream id). The client's beta tokens (`anthropic-beta`, or a body `betas` list,
   * which Anthropic itself does not accept in the body) become the header; the version and
   * the key are the gateway's. The surface's own parameters are spelled in Anthropic's terms
   * (gateway-params.ts).
   */
  readonly passthrough: Partial<Record<Wire, Passthrough>> = {
    'anthropic.messages': {
      call: (given, ctx, accept) => {
        const { body, leftOut } = spellGatewayParams(given, ctx.model)
        if (leftOut.length > 0) ctx.leftOut?.(leftOut)
        const { betas: bodyBetas, ...rest } = body
        const betas = [...(ctx.betas ?? [])]
        if (Array.isArray(bodyBetas)) betas.push(...bodyBetas.filter((b): b is string => typeof b === 'string'))
        const json = JSON.stringify({ ...rest, model: ctx.model.upstreamId })
        // A document that references an uploaded file needs the files beta upstream.
        if (json.includes('"file_id"')) betas.push(FILES_BETA)
        return callUpstream({
          provider: this.config,
          path: '/v1/messages',
          headers: withCallHeaders(this.headers(rest.stream === true, betas), ctx),
          body: json,
          signal: ctx.signal,
          auth: this.auth,
          transport: this.transport,
          ctx,
          accept,
        })
      },
      tap: (opts) => anthropicMessagesTap(this.config.name, opts?.containerGiven),
      promptText: messagesBodyText,
    },
  }

  /** Anthropic's own count of a request's input tokens (`/v1/messages/count_tokens`). */
  async countTokens(req: GenerationRequest, ctx: CallContext): Promise<number> {
    const { body, betas } = toAnthropicMessages({ ...req, stream: false }, ctx.model)
    const { max_tokens: _max, stream: _stream, temperature: _t, top_p: _p, top_k: _k, stop_sequences: _s, metadata: _m, ...countable } = body
    return callUpstream({
      provider: this.config,
      path: '/v1/messages/count_tokens',
      headers: withCallHeaders(this.headers(false, [...betas, ...(ctx.betas ?? [])]), ctx),
      body: JSON.stringify(countable),
      signal: ctx.signal,
      auth: this.auth,
      transport: this.transport,
      ctx,
      accept: async (res) => {
        const j = (await readJson(res, this.config.name)) as { input_tokens?: unknown }
        const n = countOf(j.input_tokens)
        if (n === undefined) throw new UpstreamError({ status: 502, message: `upstream ${this.config.name} sent a token count without input_tokens`, type: 'invalid_body' })
        return n
      },
    })
  }
}

/** The prompt of a messages body as text: system, message text and tool input, tool definitions. */
export function messagesBodyText(body: Record<string, unknown>): string {
  const parts: string[] = []
  const blocks = (c: unknown) => {
    if (typeof c === 'string') return void parts.push(c)
    for (const b of Array.isArray(c) ? (c as Record<string, any>[]) : []) {
      if (typeof b?.text === 'string') parts.push(b.text)
      if (b?.type === 'tool_use' && b.input) parts.push(JSON.stringify(b.input))
      if (b?.type === 'tool_result') blocks(b.content)
    }
  }
  blocks(body.system)
  for (const m of Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : []) blocks(m?.content)
  if (Array.isArray(body.tools)) parts.push(JSON.stringify(body.tools))
  return parts.join('\n')
}
