// A generation as spans, in the OpenTelemetry GenAI conventions: one span for the request (a
// server span; a batch item's is internal, under its batch's span), and under it one client
// span per upstream call, whose `traceparent` the upstream request carries. A call that failed
// before its first byte ends at once; the one that served ends with the record, so it spans the
// whole reply (a stream's last byte) and carries the response's model, id, finish and usage
// (a JSON reply may be recorded before its call is told it served: then it ends at that point).
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { Catalog } from '../config/catalog.ts'
import type { ProviderConfig } from '../config/providers.ts'
import type { GenerationInput } from '../generations/types.ts'
import type { GenerationObserver, GenerationStart, GenerationWatch } from '../pipeline/observe.ts'
import { inputContent, outputContent } from './content.ts'
import { GEN_AI, genAiProvider, HTTP, SWITCHYARD } from './names.ts'

export interface ObserverDeps {
  tracer: Tracer
  catalog: Pick<Catalog, 'cost'>
  providers: Record<string, ProviderConfig>
  captureContent: boolean
  /** The context a request's span starts in: the client's trace, its batch's, or none. */
  parentOf(rc: GenerationStart['rc']): Context
  /** A span's W3C headers, for the upstream request it makes. */
  headersOf(span: Span): Record<string, string>
}

/** `error.type`: the kind of a failure that had no HTTP answer (`connection_error`, `timeout`), else the status. */
function failed(span: Span, status: number, error: string | null | undefined, isError: boolean, kind?: string) {
  span.setAttribute(HTTP.errorType, kind ?? String(status))
  if (isError) span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? undefined })
}

export function tracingObserver(d: ObserverDeps): GenerationObserver {
  /** `server.address`/`server.port` of each provider, parsed once. */
  const servers = new Map<string, Attributes>()
  const serverOf = (id: string): Attributes => {
    let a = servers.get(id)
    if (!a) {
      a = {}
      const base = d.providers[id]?.baseUrl
      if (base && URL.canParse(base)) {
        const u = new URL(base)
        a = { [HTTP.address]: u.hostname, [HTTP.port]: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) }
      }
      servers.set(id, a)
    }
    return a
  }

  return {
    begin(start): GenerationWatch {
      const { rc, model } = start
      const attrs: Attributes = {
        [GEN_AI.operation]: 'chat',
        [GEN_AI.provider]: genAiProvider(d.providers[model.deployments[0]?.provider ?? ''] ?? { id: model.provider, kind: model.provider }),
        [GEN_AI.requestModel]: model.id,
        [SWITCHYARD.surface]: start.surface,
        [SWITCHYARD.stream]: start.stream,
        [SWITCHYARD.requestId]: rc.requestId,
        [SWITCHYARD.keyId]: rc.apiKey.id,
        [SWITCHYARD.account]: rc.apiKey.account,
      }
      if (start.maxTokens !== undefined) attrs[GEN_AI.maxTokens] = start.maxTokens
      if (start.temperature !== undefined) attrs[GEN_AI.temperature] = start.temperature
      if (rc.batchId) attrs[SWITCHYARD.batchId] = rc.batchId
      const parent = d.parentOf(rc)
      const span = d.tracer.startSpan(`chat ${model.id}`, { kind: rc.batchId ? SpanKind.INTERNAL : SpanKind.SERVER, attributes: attrs }, parent)
      const ids = span.spanContext()
      if (rc.accessLog) {
        rc.accessLog.traceId = ids.traceId
        rc.accessLog.spanId = ids.spanId
      }
      const recording = span.isRecording()
      if (recording && d.captureContent && start.body) {
        const input = inputContent(start.surface, start.body)
        span.setAttribute(GEN_AI.inputMessages, input.messages)
        if (input.system !== undefined) span.setAttribute(GEN_AI.systemInstructions, input.system)
      }
      const within = trace.setSpan(parent, span)
      /** The call that served, waiting for the record to end with it. */
      let serving: Span | undefined
      /** Ends the call that served, once the record is in. */
      let finish: ((client: Span) => void) | undefined

      return {
        attempt(call) {
          const p = d.providers[call.provider]
          const client = d.tracer.startSpan(
            `chat ${call.model.upstreamId}`,
            {
              kind: SpanKind.CLIENT,
              attributes: { [GEN_AI.operation]: 'chat', [GEN_AI.provider]: genAiProvider(p), [GEN_AI.requestModel]: call.model.upstreamId, [SWITCHYARD.provider]: call.provider, ...serverOf(call.provider) },
            },
            within,
          )
          let resends = 0
          return {
            headers: d.headersOf(client),
            // a send that failed and went again: an event on the call's span, and the count (OpenTelemetry's HTTP conventions)
            resent(status, error) {
              client.addEvent('http.request.resend', { [HTTP.status]: status, 'error.message': error })
              client.setAttribute('http.request.resend_count', ++resends)
            },
            end(status, error, upstream) {
              if (upstream?.cached) client.setAttribute(SWITCHYARD.cached, true)
              // the upstream's own status (none when it never answered), not the one the client got
              const answered = error === undefined && status < 400 ? status : upstream?.status
              if (answered !== undefined) client.setAttribute(HTTP.status, answered)
              if (error !== undefined || status >= 400) {
                failed(client, status, error, true, answered === undefined ? upstream?.type : undefined)
                client.end()
              } else if (finish) finish(client)
              else serving = client
            },
          }
        },

        end(record, reply) {
          const status = record.httpStatus ?? 200
          const isError = record.error != null || status >= 400
          const response = recording ? responseAttributes(record) : {}
          finish = (client) => {
            client.setAttributes(response)
            if (isError) failed(client, status, record.error, true)
            client.end()
          }
          if (recording) {
            span.setAttributes(response)
            span.setAttributes(gatewayAttributes(record, d))
            if (d.captureContent && reply) span.setAttribute(GEN_AI.outputMessages, outputContent(reply(), record.stream, record.finishReason))
            if (isError) failed(span, status, record.error, status >= 500)
          }
          if (serving) finish(serving)
          span.end()
        },

        refused(status, error) {
          span.setAttribute(HTTP.status, status)
          failed(span, status, error, status >= 500)
          span.end()
        },
      }
    },
  }
}

/** What the answer was: the model and id the client saw, why it stopped, the tokens. */
function responseAttributes(r: GenerationInput): Attributes {
  const u = r.usage
  const a: Attributes = {
    [GEN_AI.responseModel]: r.deployment ?? r.model.upstreamId,
    [GEN_AI.inputTokens]: u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens,
    [GEN_AI.outputTokens]: u.outputTokens,
  }
  if (r.id) a[GEN_AI.responseId] = r.id
  if (r.finishReason) a[GEN_AI.finishReasons] = [r.finishReason]
  if (u.cacheReadTokens > 0) a[GEN_AI.cacheReadTokens] = u.cacheReadTokens
  if (u.cacheWriteTokens > 0) a[GEN_AI.cacheWriteTokens] = u.cacheWriteTokens
  return a
}

/** The gateway's own: which provider served, the record's id, its cost, how many calls it took. */
function gatewayAttributes(r: GenerationInput, d: ObserverDeps): Attributes {
  const a: Attributes = {
    [GEN_AI.provider]: genAiProvider(d.providers[r.provider ?? ''] ?? { id: r.model.provider, kind: r.model.provider }),
    [HTTP.status]: r.httpStatus ?? 200,
    [SWITCHYARD.attempts]: r.attempts?.length ?? 0,
  }
  if (r.provider) a[SWITCHYARD.provider] = r.provider
  if (r.recordId) a[SWITCHYARD.generationId] = r.recordId
  if (r.ttftMs !== null) a[SWITCHYARD.ttftMs] = r.ttftMs
  if (r.usage.counted) a[SWITCHYARD.countedUsage] = true
  if (r.cached) a[SWITCHYARD.cached] = true
  let cost: number | null = null
  try {
    cost = d.catalog.cost(r.model, r.usage, new Date(r.createdAt))
  } catch {}
  if (cost !== null) a[SWITCHYARD.cost] = cost
  return a
}
