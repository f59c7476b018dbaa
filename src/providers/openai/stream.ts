// chat.completion.chunk SSE → IR stream events. State lives in the generator: tool calls
// are keyed by `tool_calls[].index` (by id when a server sends none); `tool_calls: []` next to text is text;
// the finish waits for the usage chunk and `[DONE]`.
import { emptyUsage, type Finish, type StreamEvent, type Usage } from '../../ir/types.ts'
import { parseErrorBody } from '../errors.ts'
import { readFailure, type SseMessage } from '../sse.ts'
import { finishFromOpenAI, refusedFinish } from './finish.ts'
import { usageFromOpenAI, type OpenAIUsage } from './usage.ts'
import { pricedTier } from '../../config/service-tiers.ts'
import { withoutSecrets } from '../secrets.ts'

interface ChunkToolCall {
  index?: number
  id?: string
  function?: { name?: string; arguments?: string }
}

interface ChatChunk {
  id?: string
  model?: string
  created?: number
  choices?: {
    delta?: {
      content?: string | null
      refusal?: string | null
      reasoning_content?: string | null
      tool_calls?: ChunkToolCall[] | null
      function_call?: { name?: string; arguments?: string } | null
    } | null
    finish_reason?: string | null
  }[]
  usage?: OpenAIUsage | null
  /** The tier that served it: priced apart when flex or priority. */
  service_tier?: string | null
  error?: unknown
}

interface ToolState {
  ordinal: number
  sentArgs: boolean
  open: boolean
}

const midStream = (message: string, type = 'stream_error'): StreamEvent => ({ type: 'error', error: { status: 502, message, type } })

/** `tiers`: the upstream is OpenAI's own, whose `service_tier` prices the reply (a compatible server's says nothing of OpenAI's prices). */
export async function* openAIChatEvents(messages: AsyncIterable<SseMessage>, tiers = false): AsyncGenerator<StreamEvent> {
  let started = false
  let finish: Finish | undefined
  let refused = false
  let usage: Usage = emptyUsage()
  const tools = new Map<number, ToolState>()

  function* closeTools(): Generator<StreamEvent> {
    for (const t of tools.values()) {
      if (!t.open) continue
      // A tool without parameters may stream no argument text at all; `{}` is what the non-stream answer says.
      if (!t.sentArgs) yield { type: 'tool-input-delta', index: t.ordinal, delta: '{}' }
      yield { type: 'tool-input-end', index: t.ordinal }
      t.open = false
    }
  }

  // Some OpenAI-compatible servers send no `index`: a call with an id of its own is a new call,
  // and pieces with neither continue the last such call (keyed apart from every real index).
  let unindexed: { key: number; id?: string } | undefined
  const keyOf = (call: ChunkToolCall): number => {
    if (call.index !== undefined) return call.index
    if (!unindexed || (call.id && call.id !== unindexed.id)) unindexed = { key: -2 - tools.size, id: call.id }
    return unindexed.key
  }

  function* toolDelta(key: number, call: ChunkToolCall, fallbackId: string): Generator<StreamEvent> {
    let t = tools.get(key)
    if (!t) {
      t = { ordinal: tools.size, sentArgs: false, open: true }
      tools.set(key, t)
      yield { type: 'tool-input-start', index: t.ordinal, id: call.id ?? fallbackId, name: call.function?.name ?? '' }
    }
    const args = call.function?.arguments
    if (args) {
      t.sentArgs = true
      yield { type: 'tool-input-delta', index: t.ordinal, delta: args }
    }
  }

  try {
    for await (const m of messages) {
      if (m.data === '[DONE]') break
      let chunk: ChatChunk
      try {
        chunk = JSON.parse(m.data)
      } catch {
        yield midStream('upstream sent a stream chunk that is not JSON')
        return
      }
      if (chunk.error) {
        const e = parseErrorBody(JSON.stringify(chunk))
        yield { type: 'error', error: { status: 502, message: e.message === undefined ? 'upstream stream error' : withoutSecrets(e.message), type: e.type } }
        return
      }
      if (!started) {
        started = true
        const serviceTier = tiers ? pricedTier(chunk.service_tier) : undefined
        yield { type: 'start', id: chunk.id ?? '', model: chunk.model ?? '', created: chunk.created ?? Math.floor(Date.now() / 1000), ...(serviceTier ? { serviceTier } : {}) }
      }
      const choice = chunk.choices?.[0]
      const d = choice?.delta
      if (d?.reasoning_content) yield { type: 'reasoning-delta', text: d.reasoning_content }
      if (d?.content) yield { type: 'text-delta', text: d.content }
      if (d?.refusal) {
        refused = true
        yield { type: 'text-delta', text: d.refusal }
      }
      if (d?.tool_calls) {
        for (const call of d.tool_calls) {
          const key = keyOf(call)
          yield* toolDelta(key, call, `call_${chunk.id ?? ''}_${key}`)
        }
      }
      if (d?.function_call) yield* toolDelta(-1, { id: `call_${chunk.id ?? 'legacy'}`, function: d.function_call }, `call_${chunk.id ?? 'legacy'}`)
      if (choice?.finish_reason) {
        finish = refusedFinish(finishFromOpenAI(choice.finish_reason), refused)
        yield* closeTools()
      }
      if (chunk.usage) {
        usage = usageFromOpenAI(chunk.usage, tiers ? chunk.service_tier : undefined)
        yield { type: 'usage', usage }
      }
    }
  } catch (e) {
    yield readFailure(e)
    return
  }
  if (!finish) {
    yield midStream('upstream stream ended before a finish_reason', 'incomplete_stream')
    return
  }
  yield* closeTools()
  yield { type: 'finish', finish, usage }
}
