// The non-streaming result is the folded stream (STYLE: "The result of a stream is the
// folded stream"), so streaming and non-streaming answers can never disagree.
//
// Stream conventions the fold relies on (every adapter keeps them):
// - `tool-input-*` events carry `index`, the 0-based position of the tool call among the
//   response's tool calls; a start comes before its deltas.
// - consecutive text deltas form one text part; reasoning deltas form one reasoning part
//   until its signature arrives (a signature closes the block) or other content follows.
import { UpstreamError } from './errors.ts'
import { emptyUsage, type Finish, type GenerationResponse, type Part, type StreamEvent, type Usage } from './types.ts'

type ReasoningPart = Extract<Part, { type: 'reasoning' }>
type ToolCallPart = Extract<Part, { type: 'tool-call' }>

export interface Folder {
  push(e: StreamEvent): void
  /** The folded response; throws the stream's error, or a 502 when it never finished. */
  result(): GenerationResponse
}

export function createFolder(): Folder {
  const content: Part[] = []
  const tools = new Map<number, ToolCallPart>()
  let head = { id: '', model: '', created: 0 }
  let usage: Usage = emptyUsage()
  let finish: Finish | undefined
  let error: UpstreamError | undefined
  let openReasoning: ReasoningPart | undefined

  const last = () => content[content.length - 1]

  return {
    push(e) {
      switch (e.type) {
        case 'start':
          head = { id: e.id, model: e.model, created: e.created }
          break
        case 'text-start':
          content.push({ type: 'text', text: '' })
          openReasoning = undefined
          break
        case 'reasoning-start':
          openReasoning = { type: 'reasoning', text: '' }
          content.push(openReasoning)
          break
        case 'text-end':
        case 'reasoning-end':
          break
        case 'text-citations': {
          const p = last()
          if (p?.type !== 'text') break
          const end = p.text.length
          const start = Math.max(0, end - e.span)
          if (e.sources.length > 0) (p.citations ??= []).push(...e.sources.map((s) => ({ ...s, start, end })))
          const own = e.providerData?.anthropic?.citations
          if (Array.isArray(own)) p.providerData = { anthropic: { citations: [...((p.providerData?.anthropic?.citations as unknown[] | undefined) ?? []), ...own] } }
          break
        }
        case 'text-delta': {
          const p = last()
          if (p?.type === 'text') p.text += e.text
          else content.push({ type: 'text', text: e.text })
          openReasoning = undefined
          break
        }
        case 'reasoning-delta':
          if (!openReasoning) {
            openReasoning = { type: 'reasoning', text: '' }
            content.push(openReasoning)
          }
          openReasoning.text += e.text
          break
        case 'reasoning-signature':
          if (!openReasoning) content.push((openReasoning = { type: 'reasoning', text: '' }))
          openReasoning.signature = (openReasoning.signature ?? '') + e.signature
          openReasoning = undefined
          break
        case 'reasoning-redacted':
          content.push({ type: 'reasoning', text: '', redacted: e.data })
          openReasoning = undefined
          break
        case 'web-search-start':
          content.push({ type: 'web-search', id: e.id, query: '', sources: [], status: 'incomplete' })
          openReasoning = undefined
          break
        case 'web-search-end': {
          const { type: _, ...done } = e
          const p = content.findLast((q) => q.type === 'web-search' && q.id === e.id)
          if (p) Object.assign(p, done)
          else content.push({ type: 'web-search', ...done })
          openReasoning = undefined
          break
        }
        case 'tool-input-start': {
          const part: ToolCallPart = { type: 'tool-call', id: e.id, name: e.name, arguments: '' }
          tools.set(e.index, part)
          content.push(part)
          openReasoning = undefined
          break
        }
        case 'tool-input-delta': {
          const part = tools.get(e.index)
          if (part) part.arguments += e.delta
          break
        }
        case 'tool-input-end':
          break
        case 'usage':
          usage = e.usage
          break
        case 'finish':
          finish = e.finish
          usage = e.usage
          break
        case 'error':
          error = new UpstreamError(e.error)
          break
      }
    },
    result() {
      if (error) throw error
      if (!finish) throw new UpstreamError({ status: 502, message: 'upstream stream ended before it finished', type: 'incomplete_stream' })
      return { ...head, content, finish, usage }
    },
  }
}

/** Folds a whole event stream into the response it describes. */
export async function collect(events: AsyncIterable<StreamEvent>): Promise<GenerationResponse> {
  const f = createFolder()
  for await (const e of events) {
    f.push(e)
    if (e.type === 'error') break
  }
  return f.result()
}
