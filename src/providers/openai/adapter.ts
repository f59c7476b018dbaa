// The OpenAI chat-completions upstream (`POST {baseUrl}/chat/completions`).
import type { GenerationRequest, GenerationResponse, StreamEvent } from '../../ir/types.ts'
import { commitFirst } from '../commit.ts'
import { bodyOf, callUpstream, readJson, type UpstreamRequest } from '../http.ts'
import { parseSse } from '../sse.ts'
import type { CallContext, Passthrough, ProviderAdapter, ProviderConfig, Wire } from '../types.ts'
import { chatPromptText, openAIChatTap } from './tap.ts'
import { openAIResponsesTap, responsesPromptText } from './responses-tap.ts'
import { toOpenAIChat } from './request.ts'
import { fromOpenAIChat, type ChatCompletion } from './response.ts'
import { openAIChatEvents } from './stream.ts'

export class OpenAIAdapter implements ProviderAdapter {
  readonly kind = 'openai' as const
  readonly name: string

  constructor(private readonly config: ProviderConfig) {
    this.name = config.name
  }

  private headers(stream: boolean): Record<string, string> {
    const h: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' }
    if (this.config.apiKey) h.authorization = `Bearer ${this.config.apiKey}`
    return h
  }

  async generate(req: GenerationRequest, ctx: CallContext): Promise<GenerationResponse> {
    const body = toOpenAIChat({ ...req, stream: false }, ctx.model.upstreamId)
    return callUpstream({
      provider: this.config,
      path: '/chat/completions',
      headers: this.headers(false),
      body: { json: body },
      signal: ctx.signal,
      accept: async (res) => fromOpenAIChat((await readJson(res, this.config.name)) as ChatCompletion),
    })
  }

  async stream(req: GenerationRequest, ctx: CallContext): Promise<AsyncIterable<StreamEvent>> {
    const body = toOpenAIChat({ ...req, stream: true }, ctx.model.upstreamId)
    return callUpstream({
      provider: this.config,
      path: '/chat/completions',
      headers: this.headers(true),
      body: { json: body },
      signal: ctx.signal,
      accept: async (res) => commitFirst(openAIChatEvents(parseSse(bodyOf(res, this.config.name)))),
    })
  }

  /**
   * The chat wire's fast path: the validated client body goes upstream as is (only the
   * model is replaced by the upstream id), with the same retries and error mapping.
   */
  readonly passthrough: Partial<Record<Wire, Passthrough>> = {
    'openai.chat': {
      // the client's own body: one string, as it came (the hot path pays for no size check)
      call: (body, ctx, accept) => this.post('/chat/completions', body, ctx, accept, JSON.stringify),
      tap: (opts) => openAIChatTap(opts),
      promptText: chatPromptText,
    },
    // The Responses API (`POST {baseUrl}/responses`): the responses surface's upstream. Its
    // body may carry a whole thread the gateway loaded: encoded in parts when it is long.
    'openai.responses': {
      call: (body, ctx, accept) => this.post('/responses', body, ctx, accept, (json) => ({ json })),
      tap: (opts) => openAIResponsesTap(opts),
      promptText: responsesPromptText,
    },
  }

  private post<T>(
    path: string,
    body: Record<string, unknown>,
    ctx: CallContext,
    accept: (res: Response) => Promise<T>,
    encode: (json: Record<string, unknown>) => UpstreamRequest<T>['body'],
  ): Promise<T> {
    return callUpstream({
      provider: this.config,
      path,
      headers: this.headers(body.stream === true),
      body: encode({ ...body, model: ctx.model.upstreamId }),
      signal: ctx.signal,
      accept,
    })
  }
}
