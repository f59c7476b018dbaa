// POST /api/alpha/v1/chat/completions: read → check → route → call → reply → record.
// OpenAI-family models with a configured upstream take the pass-through path; every
// other model (Claude family, the mock provider) goes through the IR.
import { Elysia } from 'elysia'
import { keyOf, requestIdOf, requestInfo } from '../../auth/context.ts'
import { readJsonBody } from '../../http/body.ts'
import type { CallContext, ProviderAdapter } from '../../providers/types.ts'
import { adapterFor, resolveModel, type Providers } from '../../routing/router.ts'
import { applyFamilyRules, compatHeader } from '../../routing/rules.ts'
import type { Services } from '../../services.ts'
import { normalizeBody, toIR, validateChat } from './decode.ts'
import { Outcome } from './outcome.ts'
import { admit } from '../../pipeline/admit.ts'
import { passthroughBody } from './passthrough.ts'
import { relayJson, relayStream, type PassthroughCall } from './relay.ts'
import type { SseOptions } from './sse.ts'
import { chatErrorFrame } from './stream.ts'
import { translatedJson, translatedStream } from './translated.ts'

export const CHAT_PATH = '/api/alpha/v1/chat/completions'

export interface ChatRouteOptions {
  /** Adapters by provider kind; built from the config when absent. */
  providers?: Providers
  /** Interval of `: ping` comments on a silent stream. */
  pingMs?: number
}

function passthroughOf(adapter: ProviderAdapter): PassthroughCall | undefined {
  const fn = (adapter as { passthroughChat?: PassthroughCall }).passthroughChat
  return adapter.kind === 'openai' && typeof fn === 'function' ? fn.bind(adapter) : undefined
}

export function chatRoutes(s: Services, opts: ChatRouteOptions = {}) {
  const providers: Providers = opts.providers ?? (s.providers as Providers)
  const mode = () => s.config.compat.crossFamily

  async function handle(request: Request): Promise<Response> {
    const apiKey = keyOf(request)
    const body = normalizeBody(await readJsonBody(request, s.config.limits.maxBodyBytes))
    const model = resolveModel(s.catalog, body.model, 'chat')
    requestInfo(request).model = model.id
    validateChat(body, model)
    const rules = applyFamilyRules(body, model.family, mode(), model.id)
    const adapter = adapterFor(providers, model)

    const headers: Record<string, string> = {}
    const compat = compatHeader(rules.compat)
    if (compat) headers['x-switchyard-compat'] = compat

    const stream = body.stream === true
    const maxOut = (body.max_completion_tokens ?? body.max_tokens) as number | undefined
    const admission = admit(s, { apiKey, model, promptTokens: Math.ceil(JSON.stringify(body.messages).length / 4), maxOutputTokens: maxOut })
    const out = new Outcome(s.recorder, { apiKey, model, stream, reservationId: admission?.reservationId })
    // One signal for the upstream call: the client's own (a disconnect aborts it) or ours,
    // raised when the response body is cancelled.
    const abort = new AbortController()
    const onAbort = () => abort.abort()
    request.signal.addEventListener('abort', onAbort, { once: true })
    const ctx: CallContext = { signal: abort.signal, model, requestId: requestIdOf(request) }
    const sse: SseOptions = {
      pingMs: opts.pingMs,
      errorFrame: chatErrorFrame,
      onCancel: () => {
        out.fail(499, 'client disconnected')
        abort.abort()
      },
    }

    const passthrough = passthroughOf(adapter)
    if (passthrough) {
      const pt = passthroughBody(body, rules)
      return stream ? relayStream(passthrough, pt.body, pt.clientWantsUsage, ctx, out, headers, sse) : relayJson(passthrough, pt.body, ctx, out, headers)
    }
    const ir = toIR(body, model, rules)
    return stream ? translatedStream(adapter, ir, ctx, out, headers, sse) : translatedJson(adapter, ir, ctx, out, headers)
  }

  return new Elysia({ name: 'chat' }).post(CHAT_PATH, ({ request }) => handle(request))
}
