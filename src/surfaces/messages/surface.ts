// The messages surface as the pipeline sees it. Claude-family models with an upstream get
// the checked body as is (pass-through); every other model goes through the IR.
import { heldPremiums } from '../../config/claude-premiums.ts'
import { boundOnce, promptBound } from '../../billing/prompt-bound.ts'
import { budgetOf, outputCap } from '../../billing/output-bound.ts'
import { messagesBeyond } from '../../billing/server-tools.ts'
import type { SurfaceCodec } from '../../pipeline/codec.ts'
import { anthropicContainer } from '../../containers/check.ts'
import { planBase, type SurfaceSpec } from '../../pipeline/surface.ts'
import { messagesToIR, PARAMS } from './params.ts'
import { resolveMessagesBodyMedia } from './media.ts'
import { encodeMessagesResponse, messagesId, messagesStopReason } from './encode.ts'
import { createMessagesStreamEncoder, messagesErrorFrame } from './stream.ts'
import { normalizeMessagesBody, validateMessages } from './validate.ts'
import { cleanReply, fittedAnswers, holdingFormatText, toolArgs as fittedToolArgs, type FittedAnswers } from './answer-nulls.ts'
import type { StreamEvent } from '../../ir/types.ts'
import { fallbackTarget, fitMessagesFallback } from '../../routing/fallback-fit.ts'
import { takesFormat } from '../../routing/claude-models.ts'
import { carriedClaudeFormat } from '../../routing/translate.ts'

/**
 * The codec of a request whose strict schemas may be fitted for a GPT model: `fitted()` says
 * where nulls were added once the IR is built (before any answer), and the answer goes out
 * without them (answer-nulls.ts).
 */
function messagesCodecFor(fitted: () => FittedAnswers | undefined): SurfaceCodec {
  return {
    endpoint: 'anthropic.messages',
    fallbackId: () => 'msg_' + crypto.randomUUID().replaceAll('-', '').slice(0, 24),
    encodeJson: (r, model) => {
      const f = fitted()
      const body = encodeMessagesResponse(f ? cleanReply(r, f) : r, model)
      return { body, id: body.id as string, finishReason: messagesStopReason(r.finish) }
    },
    promptAtStart: true,
    streamEncoder: (o) => {
      const f = fitted()
      const toolArgs = f && f.tools.size > 0 ? (name: string, args: string) => fittedToolArgs(f, name, args) : undefined
      const enc = createMessagesStreamEncoder({ id: messagesId(o.id), model: o.model, promptTokens: o.promptTokens, toolArgs })
      const push = f?.format ? holdingFormatText(f.format, (ev) => enc.push(ev)) : (ev: StreamEvent) => enc.push(ev)
      // The record keeps the surface's own stop reason, as the chat encoder's finishReason.
      const state = {
        get id() {
          return enc.state.id
        },
        get usage() {
          return enc.state.usage
        },
        get finishReason() {
          return enc.state.stopReason
        },
        get produced() {
          return enc.state.produced
        },
        get done() {
          return enc.state.done
        },
      }
      return { state, push }
    },
    errorFrame: messagesErrorFrame,
  }
}

export const messagesSurface: SurfaceSpec = {
  surface: 'messages',
  params: PARAMS,
  wire: 'anthropic.messages',
  decode(raw, cx) {
    const body = normalizeMessagesBody(raw)
    const model = cx.model(body.model, 'messages')
    validateMessages(body, model, cx.rc.betas)
    const rules = cx.rules(body, PARAMS, model)
    let fitted: FittedAnswers | undefined
    return {
      ...planBase(body, model, rules),
      encoder: messagesCodecFor(() => fitted),
      maxOutputTokens: outputCap(model, body.max_tokens, { effort: body.reasoning_effort, budgetTokens: budgetOf(body.thinking) }),
      beyond: messagesBeyond(body.tools),
      premiums: model.family === 'anthropic' ? heldPremiums(body) : undefined,
      ...boundOnce(() => promptBound(body)),
      // an Anthropic code execution container named by id: the key's own only (containers/check.ts)
      containers: anthropicContainer(body.container),
      pauseAtTool: body.pause_on_call_tools_start === true,
      ir: () => {
        const req = messagesToIR(body, model, rules)
        fitted = fittedAnswers(req)
        return req
      },
      passthrough(to) {
        // a fallback without Claude's structured output answers through a tool (the translated
        // path's reply tool), which the pass-through has no way to read back
        if (to.id !== model.id && carriedClaudeFormat(body.output_config) && !takesFormat(to.upstreamId)) return undefined
        // (the gateway's own parameters, parallel_tool_calls and reasoning_effort, the adapter spells)
        const out = { ...body }
        for (const k of rules.removed) delete out[k]
        // a fallback of the family, not the model the client wrote its parameters for
        if (to.id !== model.id) fitMessagesFallback(out, fallbackTarget(to), rules.compat, model.upstreamId)
        return { body: out, resolveMedia: (deps) => resolveMessagesBodyMedia(out, deps) }
      },
    }
  },
}
