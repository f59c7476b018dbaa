// What a request may be billed for beyond its prompt and its output cap, for its reservation.
// Tools the upstream runs itself: a web or file search is priced apiece, and what a search or a fetch
// brings back is read by the model as input, which no count of the request's body can see.
// Output in audio: priced several times text's rate. Held as a worst case like the rest, so a
// key near its credit is not admitted for a request that searches its way far past it.
import type { Usage } from '../ir/types.ts'
import { imageCallTokens } from './image-tool.ts'
import { MOST_SEARCHES, MOST_TOKENS } from '../generations/row.ts'
import { dearestNewTier, type ContainerCounts } from './containers.ts'

/** Beyond the prompt and the output cap: searches run upstream, the input tokens their results add, output in audio. */
export interface BeyondPrompt {
  webSearches: number
  fileSearches?: number
  inputTokens: number
  audioOutput: boolean
  /**
   * The model calls the upstream may make for the request: one, and one more after each use of a
   * tool it runs itself. Anthropic runs its server tools in a loop within the request, each call
   * up to `max_tokens` (its usage sums them: output past `max_tokens`), reading what the calls
   * before it wrote to its cache; undefined: one.
   */
  calls?: number
  /**
   * OpenAI's image generation tool: the images it may make, the most output tokens each may be
   * billed (partial images with it), and its image model as the request names it. Each image's
   * model reads the request's context, its images too: held as the prompt in image tokens.
   */
  imageGen?: { model?: string; images: number; outputTokens: number }
  /** OpenAI's code interpreter in auto mode: the new container it may make, held a session at its memory tier's price. */
  containers?: ContainerCounts
}

/** Uses held for a server tool that sets no bound of its own (`max_uses`, `max_tool_calls`). */
export const USES_UNBOUNDED = 10
/**
 * Input tokens held for what one search brings back: OpenAI bills a search's content as a block
 * of 8,000 input tokens on its mini models, and Claude's search results are of that size.
 */
export const TOKENS_A_SEARCH = 8_000
/** Input tokens held for one fetched page or document when the tool sets no `max_content_tokens`. */
export const TOKENS_A_FETCH = 25_000

type Obj = Record<string, unknown>

/**
 * A tool's uses, by the client's bound: at most the searches a record believes of one reply. A
 * bound past it (`1e200`) made the worst case Infinity, which holds nothing, or a sum so large
 * that the key's other holds were lost in its float rounding when it was given back.
 */
const uses = (n: unknown): number => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? Math.min(n, MOST_SEARCHES) : USES_UNBOUNDED)

/** The tools Anthropic runs itself, by their type's prefix (others, `bash_…`, `text_editor_…`, `computer_…` and custom ones, are the client's to run). */
const ANTHROPIC_RUNS = ['web_search_', 'web_fetch_', 'code_execution_', 'tool_search_tool_', 'mcp_toolset']

/** Anthropic's server tools in a messages body's `tools`: web search (priced apiece), web fetch, and each one's turn in the loop of model calls. */
export function messagesBeyond(tools: unknown): BeyondPrompt | undefined {
  if (!Array.isArray(tools)) return undefined
  let webSearches = 0
  let inputTokens = 0
  let calls = 1
  for (const t of tools as Obj[]) {
    const type = typeof t?.type === 'string' ? t.type : ''
    if (!ANTHROPIC_RUNS.some((p) => type.startsWith(p))) continue
    const n = uses(t.max_uses)
    calls += n
    if (type.startsWith('web_search_')) {
      webSearches += n
      inputTokens += n * TOKENS_A_SEARCH
    } else if (type.startsWith('web_fetch_')) {
      // no more than a record believes of one reply's input
      const most = typeof t.max_content_tokens === 'number' && t.max_content_tokens > 0 ? Math.min(t.max_content_tokens, MOST_TOKENS) : TOKENS_A_FETCH
      inputTokens += n * most
    }
  }
  return calls > 1 ? { webSearches, inputTokens: Math.min(inputTokens, MOST_TOKENS), audioOutput: false, calls } : undefined
}

/**
 * The Responses API's hosted web and file searches in `tools` (and `web_search_options`, which
 * goes upstream as a web search tool), their calls bounded by `max_tool_calls` when set, its
 * image generation, and the container a code interpreter in auto mode makes.
 */
export function responsesBeyond(tools: unknown, maxToolCalls: unknown, webSearchOptions?: unknown, handedTools: readonly unknown[] = []): BeyondPrompt | undefined {
  const list = Array.isArray(tools) ? (tools as Obj[]) : []
  const has = (kind: string) => list.some((t) => typeof t?.type === 'string' && t.type.startsWith(kind))
  const web = has('web_search') || webSearchOptions !== undefined
  const file = has('file_search')
  const image = list.find((t) => t?.type === 'image_generation')
  // a code interpreter in auto mode makes a container (or takes up one the key has): one, at the
  // dearest tier asked for, in `tools` or in the input's `additional_tools` items (`handedTools`)
  const tier = dearestNewTier([...list, ...handedTools])
  if (!web && !file && !image && !tier) return undefined
  const n = uses(maxToolCalls)
  const imageGen = image ? { imageGen: { ...(typeof image.model === 'string' ? { model: image.model } : {}), images: n, outputTokens: imageCallTokens(image) } } : {}
  const containers = tier ? { containers: { [tier]: 1 } } : {}
  // OpenAI's searches bound the reply's output as a whole: no loop of calls (a Claude model runs none of them)
  return { webSearches: web ? n : 0, ...(file ? { fileSearches: n } : {}), inputTokens: web || file ? Math.min(n * TOKENS_A_SEARCH, MOST_TOKENS) : 0, audioOutput: false, ...imageGen, ...containers }
}

/**
 * OpenAI's chat models that search the web for every request (`gpt-4o-search-preview`,
 * `gpt-4o-mini-search-preview`, `gpt-5-search-api`, dated or not): each is billed one search,
 * which no usage of theirs reports. OpenAI refuses `n` for them, and so does the chat surface
 * past 1 (validate.ts): one search a request, recorded and held alike.
 */
const SEARCHES_EACH_REPLY = /-search-(?:preview|api)(?:-|$)/

/** Searches a reply of `model` is billed for whatever it reports: one for a search model of OpenAI's, else none. */
export function searchesEachReply(model: { family: string; id: string; upstreamId: string }): number {
  return model.family === 'openai' && (SEARCHES_EACH_REPLY.test(model.upstreamId) || SEARCHES_EACH_REPLY.test(model.id)) ? 1 : 0
}

/** Chat: an answer asked for in audio (`modalities` naming it) is held at the audio output rate. */
export function chatBeyond(modalities: unknown): BeyondPrompt | undefined {
  return Array.isArray(modalities) && modalities.includes('audio') ? { webSearches: 0, inputTokens: 0, audioOutput: true } : undefined
}

/** `beyond` with the searches `model` runs for each of `replies` whatever the request asks (a search model's), and what they bring back. */
export function withReplySearches(beyond: BeyondPrompt | undefined, model: { family: string; id: string; upstreamId: string }, replies: number): BeyondPrompt | undefined {
  const n = searchesEachReply(model) * replies
  if (n === 0) return beyond
  return { ...beyond, webSearches: (beyond?.webSearches ?? 0) + n, inputTokens: (beyond?.inputTokens ?? 0) + n * TOKENS_A_SEARCH, audioOutput: beyond?.audioOutput ?? false }
}

/** The model calls of a request whose upstream runs its tools in a loop (`loops`: Anthropic's), else one. */
export const loopCalls = (beyond: BeyondPrompt | undefined, loops: boolean): number => (loops && beyond?.calls !== undefined && beyond.calls > 1 ? beyond.calls : 1)

/**
 * The worst-case usage of a prompt bound and an output cap, with what lies beyond them. `loops`:
 * the upstream runs its tools in a loop of model calls (Anthropic's server tools), each up to the
 * cap, each after the first reading the prompt and what the tools brought back from its cache.
 */
export function worstUsage(prompt: number, cap: number, beyond: BeyondPrompt | undefined, loops = false): Usage {
  const usage: Usage = { inputTokens: prompt, outputTokens: cap, cacheReadTokens: 0, cacheWriteTokens: 0 }
  if (!beyond) return usage
  const calls = loopCalls(beyond, loops)
  usage.outputTokens = cap * calls
  usage.cacheReadTokens = (prompt + beyond.inputTokens) * (calls - 1)
  usage.inputTokens += beyond.inputTokens
  if (beyond.webSearches > 0) usage.webSearches = beyond.webSearches
  if (beyond.fileSearches) usage.fileSearches = beyond.fileSearches
  if (beyond.audioOutput) usage.outputAudioTokens = cap * calls
  if (beyond.containers) usage.containers = beyond.containers
  const image = beyond.imageGen
  if (image && image.images > 0) {
    const input = prompt * image.images
    const output = image.outputTokens * image.images
    usage.imageGen = { ...(image.model ? { model: image.model } : {}), inputTokens: input, imageInputTokens: input, cachedTokens: 0, cachedImageTokens: 0, outputTokens: output, imageOutputTokens: output }
  }
  return usage
}
