// IR stream events → chat-style SSE frames, as OpenAI writes them: `id` on every chunk,
// `role` on the first delta, tool-call arguments as incremental deltas under stable
// indexes, a last content frame with an empty delta and the finish reason, the
// usage-only chunk before `[DONE]` when asked, then `data: [DONE]`. A mid-stream error
// ends the stream with an error chunk and without `[DONE]`, so clients see an abrupt close.
import type { StreamEvent, Usage } from '../../ir/types.ts'
import { emptyUsage } from '../../ir/types.ts'
import type { StreamEncoderState } from '../../pipeline/codec.ts'
import { customInputOf } from '../custom-tools.ts'
import { chatAnnotation, chatFinishReason, chatUsage, type ChatAnnotation, type ChatThinkingBlock } from './encode.ts'

export const DONE_FRAME = 'data: [DONE]\n\n'

export interface ChatStreamOptions {
  /** Fallbacks until the `start` event says otherwise. */
  id: string
  model: string
  created: number
  includeUsage: boolean
  /** The request's custom tools: their calls go out as custom tool calls, the input whole once the call ends. */
  customTools?: ReadonlySet<string>
}

export interface ChatStreamState extends StreamEncoderState {
  id: string
  model: string
  created: number
  usage: Usage
  finishReason: string | null
  /** True once a content-bearing frame (anything after the role frame) was produced. */
  produced: boolean
  done: boolean
  failed: boolean
}

export interface ChatStreamEncoder {
  readonly state: ChatStreamState
  /** The SSE text for one IR event ('' when the event has no wire form). */
  push(ev: StreamEvent): string
}

export function frame(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`
}

export function createChatStreamEncoder(o: ChatStreamOptions): ChatStreamEncoder {
  const state: ChatStreamState = {
    id: o.id, model: o.model, created: o.created, usage: emptyUsage(),
    finishReason: null, produced: false, done: false, failed: false,
  }
  let roleSent = false
  /** The thinking block open now, its text so far; the turn's signed blocks, sent whole before the finish. */
  let thinking = ''
  /** The message's characters so far (where a cited span ends), and the sources cited in them. */
  let chars = 0
  const annotations: ChatAnnotation[] = []
  const blocks: ChatThinkingBlock[] = []
  // IR tool index (e.g. an Anthropic content-block index) → chat tool_calls index 0, 1, 2…
  const toolIndex = new Map<number, number>()
  // A custom tool's call, by IR index: its arguments (`{"input": …}`) gathered, the input sent when the call ends
  const customCalls = new Map<number, { idx: number; args: string }>()
  const customInput = (index: number): string => {
    const c = customCalls.get(index)
    if (!c) return ''
    customCalls.delete(index)
    return chunk({ tool_calls: [{ index: c.idx, custom: { input: customInputOf(c.args) } }] })
  }

  // Every chunk is the same JSON but for its delta and finish reason: the rest is written once
  // (again when `start` changes the id or model), and each chunk puts its delta's JSON between.
  // A text chunk, most of a stream, is three pieces in one template: one rope made for it (a
  // chain of `+` would make two).
  const end = o.includeUsage ? '}],"usage":null}\n\n' : '}]}\n\n'
  const plainTail = `,"logprobs":null,"finish_reason":null${end}`
  const textTail = '}' + plainTail
  let head: string | undefined
  let textHead = ''
  const heads = (): string => {
    head = `data: {"id":${JSON.stringify(state.id)},"object":"chat.completion.chunk","created":${JSON.stringify(state.created)},"model":${JSON.stringify(state.model)},"choices":[{"index":0,"delta":`
    textHead = head + '{"content":'
    return head
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `${head ?? heads()}${JSON.stringify(delta)}${finish === null ? plainTail : `,"logprobs":null,"finish_reason":${JSON.stringify(finish)}${end}`}`
  const textChunk = (text: string) => {
    if (head === undefined) heads()
    return `${textHead}${JSON.stringify(text)}${textTail}`
  }
  // The openai SDK's stream helper needs `role` on the first delta ("missing role for choice 0").
  const open = () => {
    if (roleSent) return ''
    roleSent = true
    return chunk({ role: 'assistant', content: null })
  }

  function push(ev: StreamEvent): string {
    if (state.done || state.failed) return ''
    switch (ev.type) {
      case 'start':
        state.id = ev.id || state.id
        state.model = ev.model || state.model
        state.created = ev.created || state.created
        head = undefined
        return open()
      case 'text-delta':
        if (ev.text === '') return open()
        state.produced = true
        chars += ev.text.length
        return open() + textChunk(ev.text)
      case 'text-citations':
        for (const s of ev.sources) annotations.push(chatAnnotation({ ...s, start: Math.max(0, chars - ev.span), end: chars }))
        return ''
      case 'tool-input-start': {
        const idx = toolIndex.size
        toolIndex.set(ev.index, idx)
        state.produced = true
        if (o.customTools?.has(ev.name)) {
          customCalls.set(ev.index, { idx, args: '' })
          return open() + chunk({ tool_calls: [{ index: idx, id: ev.id, type: 'custom', custom: { name: ev.name, input: '' } }] })
        }
        return open() + chunk({ tool_calls: [{ index: idx, id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } }] })
      }
      case 'tool-input-delta': {
        const idx = toolIndex.get(ev.index)
        // Never a delta for a call that was not started; skip empty pieces.
        if (idx === undefined || ev.delta === '') return ''
        const custom = customCalls.get(ev.index)
        if (custom) {
          custom.args += ev.delta
          return ''
        }
        return chunk({ tool_calls: [{ index: idx, function: { arguments: ev.delta } }] })
      }
      case 'tool-input-end':
        return customInput(ev.index)
      case 'usage':
        state.usage = ev.usage
        return ''
      case 'finish': {
        state.usage = ev.usage
        state.finishReason = chatFinishReason(ev.finish)
        state.done = true
        // a custom call whose end never came still gets its input; the signed thinking goes in one
        // delta, whole (the openai SDK's stream helper keeps a field's last delta, not their sum)
        // so do the annotations, after the text they point into
        let out = [...customCalls.keys()].map(customInput).join('') + open() + (blocks.length > 0 ? chunk({ thinking_blocks: blocks }) : '') + (annotations.length > 0 ? chunk({ annotations }) : '') + chunk({}, state.finishReason)
        if (o.includeUsage) {
          out += frame({ id: state.id, object: 'chat.completion.chunk', created: state.created, model: state.model, choices: [], usage: chatUsage(state.usage) })
        }
        return out + DONE_FRAME
      }
      case 'reasoning-start':
        thinking = ''
        return ''
      case 'reasoning-delta':
        if (ev.text === '') return ''
        thinking += ev.text
        return open() + chunk({ reasoning_content: ev.text })
      case 'reasoning-signature':
        blocks.push({ type: 'thinking', thinking, signature: ev.signature })
        thinking = ''
        return ''
      case 'reasoning-redacted':
        blocks.push({ type: 'redacted_thinking', data: ev.data })
        return ''
      case 'error':
        state.failed = true
        return ''
      default:
        return ''
    }
  }
  return { state, push }
}

/**
 * OpenAI's in-band error chunk for a failure after the stream began: the `openai` SDK
 * raises it as an APIError with this message; no finish frame and no [DONE] follow.
 */
export function chatErrorFrame(e: unknown): string {
  const status = typeof (e as { status?: unknown })?.status === 'number' ? (e as { status: number }).status : 502
  const message = e instanceof Error ? e.message : 'upstream stream failed'
  return `data: ${JSON.stringify({ error: { message, type: status === 499 ? 'client_disconnected' : 'upstream_error', code: status } })}\n\n`
}
