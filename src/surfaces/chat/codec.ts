// The chat surface as the pipeline sees it: its checks and IR mapping (decode.ts), its
// pass-through body (passthrough.ts), and its wire encoders (encode.ts, stream.ts).
import { fallbackTarget } from '../../routing/fallback-fit.ts'
import { heldPremiums } from '../../config/claude-premiums.ts'
import { PARAMS } from './params.ts'
import { boundOnce, promptBound } from '../../billing/prompt-bound.ts'
import { budgetOf, outputCap } from '../../billing/output-bound.ts'
import { chatBeyond, messagesBeyond } from '../../billing/server-tools.ts'
import type { SurfaceCodec } from '../../pipeline/codec.ts'
import { anthropicContainer } from '../../containers/check.ts'
import { planBase, type SurfaceSpec } from '../../pipeline/surface.ts'
import { toIR } from './params.ts'
import { normalizeBody, validateChat } from './validate.ts'
import { chatFinishReason, encodeChatResponse } from './encode.ts'
import { customToolNames } from './decode.ts'
import { resolveChatBodyFiles } from './media.ts'
import { passthroughBody } from './passthrough.ts'
import { chatErrorFrame, createChatStreamEncoder } from './stream.ts'
import { heldTier } from '../../config/service-tiers.ts'
import { searchesThroughIR } from '../openai-options.ts'

export const chatCodec: SurfaceCodec = {
  endpoint: 'openai.chat.completions',
  fallbackId: () => 'chatcmpl-' + crypto.randomUUID().replaceAll('-', ''),
  encodeJson: (r, model) => ({ body: encodeChatResponse(r, model), id: r.id, finishReason: chatFinishReason(r.finish) }),
  streamEncoder: (o) => createChatStreamEncoder(o),
  errorFrame: chatErrorFrame,
}

/** The codec of a request with custom tools: their calls go out as custom tool calls. */
function chatCodecWith(customTools: ReadonlySet<string>): SurfaceCodec {
  return {
    ...chatCodec,
    encodeJson: (r, model) => ({ body: encodeChatResponse(r, model, customTools), id: r.id, finishReason: chatFinishReason(r.finish) }),
    streamEncoder: (o) => createChatStreamEncoder({ ...o, customTools }),
  }
}

export const chatSurface: SurfaceSpec = {
  surface: 'chat',
  params: PARAMS,
  wire: 'openai.chat',
  decode(raw, cx) {
    const body = normalizeBody(raw)
    const model = cx.model(body.model, 'chat')
    validateChat(body, model)
    const rules = cx.rules(body, PARAMS, model)
    const customTools = customToolNames(body.tools)
    return {
      ...planBase(body, model, rules),
      encoder: customTools.size === 0 ? chatCodec : chatCodecWith(customTools),
      maxOutputTokens: outputCap(model, body.max_completion_tokens ?? body.max_tokens, { effort: body.reasoning_effort, budgetTokens: budgetOf(body.thinking) }),
      // n the family rules took out (a Claude model answers once) holds no more than one choice
      choices: rules.removed.includes('n') ? undefined : body.n,
      serviceTier: model.family === 'openai' ? heldTier(body.service_tier) : undefined,
      premiums: model.family === 'anthropic' ? heldPremiums(body) : undefined,
      // a Claude model's web search (web_search_options) is Anthropic's loop of searches (the mock's, held alike)
      beyond: searchesThroughIR(model) && body.web_search_options !== undefined ? messagesBeyond([{ type: 'web_search_20250305' }]) : chatBeyond(body.modalities),
      ...boundOnce(() => promptBound(body)),
      // an Anthropic code execution container named by id: the key's own only (containers/check.ts)
      containers: anthropicContainer(body.container),
      pauseAtTool: false,
      ir: () => toIR(body, model, rules),
      passthrough(to) {
        const pt = passthroughBody(body, rules, fallbackTarget(to), to.id !== model.id)
        return { body: pt.body, tap: { stripUsage: !pt.clientWantsUsage }, resolveMedia: (deps) => resolveChatBodyFiles(pt.body, deps) }
      },
    }
  },
}
