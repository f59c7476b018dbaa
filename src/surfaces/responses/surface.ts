// The responses surface as the pipeline sees it. OpenAI-family models with an upstream go
// to OpenAI's Responses API (pass-through; the final object completed with the spec's
// extras); Claude-family models and the mock go through the IR. Each request's plan carries
// its checked turn and its own codec, which stores the thread before the reply's terminal event.
import { heldPremiums } from '../../config/claude-premiums.ts'
import { PARAMS } from './params.ts'
import { boundOnce, promptBound } from '../../billing/prompt-bound.ts'
import { outputCap } from '../../billing/output-bound.ts'
import { responsesBeyond } from '../../billing/server-tools.ts'
import { claudeSearchHold } from './web-search.ts'
import type { CatalogModel } from '../../config/catalog.ts'
import type { SurfaceCodec } from '../../pipeline/codec.ts'
import type { RequestContext } from '../../pipeline/context.ts'
import { planBase, type SurfaceSpec } from '../../pipeline/surface.ts'
import type { TapOptions } from '../../routing/contract.ts'
import type { ThreadServices } from '../../services.ts'
import { turnToIR } from './params.ts'
import { completeResponse, encodeResponse, type ResponseFrame } from './encode.ts'
import { newId } from './item-ids.ts'
import { resolveResponsesBodyFiles } from './media.ts'
import { keepsReasoning, upstreamBody } from './passthrough.ts'
import { fallbackTarget, fitResponsesFallback } from '../../routing/fallback-fit.ts'
import { createResponsesStreamEncoder, failureEvents, sse, type ResponsesStreamEncoder } from './stream.ts'
import { ThreadStore } from './thread.ts'
import { JsonRows } from '../../db/json-rows.ts'
import { normalizeResponsesBody, validateResponses, type Turn } from './validate.ts'
import type { Item } from './items.ts'
import { withHeld } from './held-search.ts'
import { openTools, type OpenedTools } from './namespaces.ts'
import { heldTier } from '../../config/service-tiers.ts'
import { conversationStoreOf } from './conversations/store.ts'
import { appendTurn } from './conversations/turn.ts'

type Obj = Record<string, unknown>

/** Custom tools (their calls come back as custom_tool_call items), by the names they are offered by: those of namespaces and handed over in the input too. */
const customNames = (opened: OpenedTools) => new Set(opened.tools.flatMap(({ tool }) => (tool.type === 'custom' && typeof tool.name === 'string' ? [tool.name] : [])))

/** The tools the input's `additional_tools` items hand over (a code interpreter's new container there is held too). */
const handedTools = (input: unknown): unknown[] =>
  Array.isArray(input) ? input.flatMap((it) => (it?.type === 'additional_tools' && Array.isArray(it.tools) ? (it.tools as unknown[]) : [])) : []

/** A reply holds its last bytes this long at most for its thread row (a store that cannot write). */
const DURABLE_WAIT_MS = 5_000

const stores = new WeakMap<ThreadServices, ThreadStore>()

/** The one thread store of a gateway's services (the surface and the object routes share its pending rows). */
export function threadStoreOf(s: ThreadServices): ThreadStore {
  let t = stores.get(s)
  if (!t) stores.set(s, (t = new ThreadStore(s.storage.sql, s.config.responses.maxThreadBytes, s.config.responses.retentionDays, new JsonRows(s.storage.file))))
  return t
}

export function responsesSurface(s: ThreadServices, threads = threadStoreOf(s)): SurfaceSpec {
  const conversations = conversationStoreOf(s)
  const toolCallsStatus = s.config.responses.toolCallsStatus
  s.onClose.push(() => threads.flush())
  /**
   * Stores a finished response of a stored turn (failed ones are not part of a thread), once;
   * `durable` resolves when its row is committed (at once when nothing was stored).
   */
  const storer = (turn: Turn, model: CatalogModel, rc: RequestContext) => {
    let saved: Promise<void> | undefined
    const store = (r: Obj) => {
      if (saved || !turn.store || r.status === 'failed' || typeof r.id !== 'string') return
      // the model that answered (a fallback's reasoning goes back to it only)
      const maker = rc.served ?? model.id
      saved = threads.save({
        id: r.id,
        apiKeyId: rc.apiKey.id,
        model: maker,
        status: String(r.status),
        previousResponseId: turn.previousResponseId ?? null,
        previous: turn.previous ?? null,
        conversation: turn.conversation ?? null,
        inputItems: turn.items,
        // the reply's own output items: the encoder's, or the upstream's as it sent them
        outputItems: Array.isArray(r.output) ? withHeld(r.output as Item[]) : [],
        response: r,
      })
      if (turn.conversationId !== undefined) {
        // the turn joins its conversation before the reply's last bytes go out (durable), and
        // the conversation's next turn waits until it has
        const output = Array.isArray(r.output) ? withHeld(r.output as Item[]) : []
        const added = appendTurn(conversations, turn.conversationId, turn.items, output, maker, (e) =>
          s.log.error('conversations: a stored turn was not added to its conversation', { request_id: rc.requestId, conversation_id: turn.conversationId, error: String(e) }),
        )
        saved = Promise.all([saved, added]).then(() => rc.releaseTurn?.())
        return
      }
      // saved (the lookups read it before it is written): the conversation's next turn may go
      rc.releaseTurn?.()
    }
    const durable = async () => {
      if (!saved) return
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, DURABLE_WAIT_MS)))
      await Promise.race([saved, late])
      clearTimeout(timer)
    }
    return { store, durable }
  }

  interface Run {
    codec: SurfaceCodec
    hooks: NonNullable<TapOptions['responses']>
  }
  /** The request's codec and pass-through hooks, which store its thread. */
  function run(body: Obj, turn: Turn, model: CatalogModel, rc: RequestContext): Run {
    const { store, durable } = storer(turn, model, rc)
    // only the IR path's encoders need them (the pass-through upstream names its own items)
    let opened: OpenedTools | undefined
    let custom: Set<string> | undefined
    const tools = () => (opened ??= openTools(turn))
    const customs = () => (custom ??= customNames(tools()))
    const frame = (id: string, modelName: string): ResponseFrame => ({ id, model: modelName, createdAt: Math.floor(Date.now() / 1000), turn, body, toolCallsStatus, members: tools().members })
    let enc: ResponsesStreamEncoder | undefined
    // What the pass-through stream has shown so far, for a failure the upstream did not report.
    let seen: { response: Obj; sequence: number; last: () => number } | undefined
    // and the output items it completed, by index, which the failed response still holds
    const items: Obj[] = []
    const codec: SurfaceCodec = {
      endpoint: 'openai.responses',
      fallbackId: () => newId('resp'),
      encodeJson(r, modelName) {
        const out = encodeResponse(r, frame(newId('resp'), modelName), customs())
        store(out)
        return { body: out, id: out.id as string, finishReason: out.status as string, status: out.status as string }
      },
      streamEncoder(o) {
        enc = createResponsesStreamEncoder(frame(o.id, o.model), customs(), store, rc.knownEventsOnly === true)
        return enc
      },
      errorFrame(e) {
        if (enc) return enc.failure(e)
        // The pass-through stream failed without the upstream saying so (it closed early).
        const err = e as { message?: string; type?: string }
        const error = { code: err?.type ?? 'server_error', message: err?.message ?? 'stream failed' }
        // numbered on from the last event relayed, deltas included: numbers only ever grow
        let seq = (seen ? Math.max(seen.sequence, seen.last()) : -1) + 1
        const ev = (type: string, payload: Obj) => sse(type, { sequence_number: seq++, ...payload })
        const r = { ...(seen?.response ?? { id: 'resp_unknown', object: 'response' }), output: items.filter(Boolean), status: 'failed', error }
        return failureEvents(ev, error, r, rc.knownEventsOnly === true)
      },
      durable,
    }
    /** `r` saying what the client's turn was, not what went upstream: its previous reply, its store, its conversation. */
    const asTurn = (r: Obj): Obj => {
      if (turn.stateful) {
        r.previous_response_id = turn.previousResponseId ?? null
        r.store = turn.store
      }
      if (turn.conversationId !== undefined) r.conversation = { id: turn.conversationId }
      return r
    }
    const hooks: Run['hooks'] = {
      observe(response, sequence, last) {
        seen = { response, sequence, last }
      },
      itemDone(item, index) {
        // an index a stream gives once (a bound against one that sends a huge one)
        if (index >= 0 && index <= items.length + 64) items[index] = item
      },
      // the turn as the client sent it, from the first snapshot on (the final one says the same):
      // upstream, a stateful turn went with store false and its history, not its previous reply
      opened: (r) => (turn.stateful || turn.conversationId !== undefined ? asTurn({ ...r }) : undefined),
      finalize(r) {
        asTurn(r)
        completeResponse(r, toolCallsStatus)
        store(r)
        return r
      },
      terminal(type, event, seq) {
        const r = event.response as Obj
        const at = (n: number) => (seq === undefined ? {} : { sequence_number: seq + n })
        // a failure ends with response.completed carrying status failed, after the upstream's own
        if (type === 'response.failed') return sse('response.completed', { ...at(1), response: r })
        // a reply that ends in tool calls says so first, for a client that knows the event
        if (r.status === 'requires_action' && rc.knownEventsOnly !== true) return sse('response.requires_action', { ...at(0), response: r }) + sse('response.completed', { ...at(1), response: r })
        return sse(type, event)
      },
      durable,
    }
    return { codec, hooks }
  }

  return {
    surface: 'responses',
    params: PARAMS,
    wire: 'openai.responses',
    async decode(raw, cx) {
      const body = normalizeResponsesBody(raw)
      const model = cx.model(body.model, 'responses')
      const turn = await validateResponses(body, model, { apiKeyId: cx.rc.apiKey.id, threads, conversations, mode: cx.crossFamily })
      const rules = cx.rules(body, PARAMS, model)
      const { codec, hooks } = run(body, turn, model, cx.rc)
      // its prompt: the body and the history it continues; where references were replaced by the
      // items they name, those count, not the body's input
      const prompt = turn.referenced ? [{ ...body, input: undefined, messages: undefined }, turn.history, turn.items] : [body, turn.history]
      return {
        model,
        body,
        stream: body.stream === true,
        compat: rules.compat,
        encoder: codec,
        // a summary asked for without an effort thinks at medium (turnToIR)
        maxOutputTokens: outputCap(model, body.max_output_tokens, { effort: turn.effort ?? (turn.summary ? 'medium' : undefined) }),
        serviceTier: model.family === 'openai' ? heldTier(body.service_tier) : undefined,
        // the Responses surface asks for neither mode: a Claude model is held as one whose workspace may run it in the US
        premiums: model.family === 'anthropic' ? heldPremiums({}) : undefined,
        // a Claude model's request goes through the IR, which keeps of OpenAI's hosted tools the web search only (web-search.ts)
        beyond: model.family === 'anthropic' ? claudeSearchHold([...(Array.isArray(body.tools) ? body.tools : []), ...handedTools(body.input)], body.max_tool_calls) : responsesBeyond(body.tools, body.max_tool_calls, body.web_search_options, handedTools(body.input)),
        // the files its prompt names are held for as its text is (pipeline/generate.ts: filesBound)
        prompt,
        ...boundOnce(() => promptBound(...prompt)),
        containers: turn.containers,
        pauseAtTool: false,
        ir: () => turnToIR(body, turn, model, rules),
        passthrough(to) {
          // a fallback of the family gets the thread's reasoning only if it made it, and the client's parameters fitted for it
          const out = upstreamBody(body, turn, rules.compat, to.id, keepsReasoning(to))
          if (to.id !== model.id) fitResponsesFallback(out, fallbackTarget(to), rules.compat)
          return { body: out, tap: { responses: hooks }, resolveMedia: (deps) => resolveResponsesBodyFiles(out, deps) }
        },
      }
    },
  }
}
