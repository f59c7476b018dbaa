// The Anthropic messages upstream (`POST {baseUrl}/v1/messages`).
import type { GenerationRequest, GenerationResponse, StreamEvent } from '../../ir/types.ts'
import { commitFirst } from '../commit.ts'
import { bodyOf, callUpstream, readJson } from '../http.ts'
import { parseSse } from '../sse.ts'
import type { CallContext, ProviderAdapter, ProviderConfig } from '../types.ts'
import { FILES_BETA, toAnthropicMessages } from './request.ts'
import { fromAnthropicMessage, type AnthropicMessage } from './response.ts'
import { anthropicEvents } from './stream.ts'

export const ANTHROPIC_VERSION = '2023-06-01'

/** Client headers a pass-through may forward upstream; everything else (auth above all) is ours. */
const FORWARDED = ['anthropic-beta']

export class AnthropicAdapter implements ProviderAdapter {
  readonly kind = 'anthropic' as const
  readonly name: string

  constructor(private readonly config: ProviderConfig) {
    this.name = config.name
  }

  private headers(stream: boolean, betas: string[]): Record<string, string> {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
    }
    if (this.config.apiKey) h['x-api-key'] = this.config.apiKey
    if (betas.length) h['anthropic-beta'] = [...new Set(betas)].join(',')
    return h
  }

  async generate(req: GenerationRequest, ctx: CallContext): Promise<GenerationResponse> {
    const { body, betas } = toAnthropicMessages({ ...req, stream: false }, ctx.model)
    return callUpstream({
      provider: this.config,
      path: '/v1/messages',
      headers: this.headers(false, betas),
      body: JSON.stringify(body),
      signal: ctx.signal,
      accept: async (res) => fromAnthropicMessage((await readJson(res, this.config.name)) as AnthropicMessage),
    })
  }

  async stream(req: GenerationRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    const { body, betas } = toAnthropicMessages({ ...req, stream: true }, ctx.model)
    return callUpstream({
      provider: this.config,
      path: '/v1/messages',
      headers: this.headers(true, betas),
      body: JSON.stringify(body),
      signal: ctx.signal,
      accept: async (res) => commitFirst(anthropicEvents(parseSse(bodyOf(res, this.config.name)), this.config.name)),
    })
  }

  /**
   * The messages surface's fast path: the validated body goes upstream as is (model replaced
   * by the upstream id). Of the client's headers only `anthropic-beta` is forwarded (merged
   * with a body `betas` list, which Anthropic itself does not accept in the body); the
   * version and the key are the gateway's. Returns the 2xx Response unread.
   */
  async passthroughMessages(body: Record<string, unknown>, headers: Headers | Record<string, string>, ctx: CallContext): Promise<Response> {
    const h = headers instanceof Headers ? headers : new Headers(headers)
    const betas = FORWARDED.flatMap((name) => (h.get(name) ?? '').split(',')).map((s) => s.trim()).filter(Boolean)
    const { betas: bodyBetas, ...rest } = body
    if (Array.isArray(bodyBetas)) betas.push(...bodyBetas.filter((b): b is string => typeof b === 'string'))
    const json = JSON.stringify({ ...rest, model: ctx.model.upstreamId })
    // Pitfall 7: a document that references an uploaded file needs the files beta upstream.
    if (json.includes('"file_id"')) betas.push(FILES_BETA)
    return callUpstream({
      provider: this.config,
      path: '/v1/messages',
      headers: this.headers(rest.stream === true, betas),
      body: json,
      signal: ctx.signal,
      accept: async (res) => res,
    })
  }
}
