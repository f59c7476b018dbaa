// What a Responses reply's hosted tools are billed for, beyond its model's usage: the web
// searches OpenAI bills (`tool_usage.web_search.num_requests`: opening a page and some searches
// are not billed, so counting `web_search_call` items over-counts), file searches (no count
// given: one a `file_search_call` item), and the tokens of the image model the image generation
// tool ran (`tool_usage.image_gen`, priced at that model's rates).
import type { ImageGenUsage, Usage } from '../../ir/types.ts'
import { imageTokens } from '../../billing/image-tool.ts'
import { countOf } from '../counts.ts'

type Obj = Record<string, any>

/** Tokens one count may hold: past any model's (a bad upstream's 1e308 is not a bill). */
const MOST = 10_000_000

/** A count as the reply gives it (read as the model's usage is), or undefined past what a reply can have. */
const count = (n: unknown): number | undefined => {
  const c = countOf(n)
  return c !== undefined && c <= MOST ? c : undefined
}

/** The image generation tool's model as the response echoes its tools, when it names one. */
function imageModel(tools: unknown): string | undefined {
  const tool = Array.isArray(tools) ? (tools as Obj[]).find((t) => t?.type === 'image_generation') : undefined
  return typeof tool?.model === 'string' ? tool.model : undefined
}

/** `tool_usage.image_gen` as the record keeps it: each detail at most its total. */
function imageGenOf(g: Obj, model: string | undefined): ImageGenUsage | undefined {
  const input = count(g.input_tokens) ?? 0
  const output = count(g.output_tokens) ?? 0
  if (input === 0 && output === 0) return undefined
  const cached = Math.min(count(g.cached_tokens) ?? 0, input)
  const imageInput = Math.min(count(g.input_tokens_details?.image_tokens) ?? 0, input)
  return {
    ...(model ? { model } : {}),
    inputTokens: input,
    imageInputTokens: imageInput,
    cachedTokens: cached,
    cachedImageTokens: Math.min(count(g.cached_tokens_details?.cached_image_tokens) ?? 0, cached, imageInput),
    outputTokens: output,
    // not said: every output token an image one, the dearer reading
    imageOutputTokens: Math.min(count(g.output_tokens_details?.image_tokens) ?? output, output),
  }
}

/**
 * Images made with no `tool_usage` to count them (it may be left out): each at the most output
 * tokens its quality and size may be billed, its input unknown.
 */
function imagesUncounted(output: Obj[], model: string | undefined): ImageGenUsage | undefined {
  const made = output.filter((it) => it?.type === 'image_generation_call' && typeof it.result === 'string' && it.result !== '')
  if (made.length === 0) return undefined
  const tokens = made.reduce((sum, it) => sum + imageTokens(model, it.quality, it.size), 0)
  return { ...(model ? { model } : {}), inputTokens: 0, imageInputTokens: 0, cachedTokens: 0, cachedImageTokens: 0, outputTokens: tokens, imageOutputTokens: tokens }
}

/** What a final Responses reply's hosted tools add to its usage. */
export function toolUsageOf(response: Obj): Pick<Usage, 'webSearches' | 'fileSearches' | 'imageGen'> {
  const out: Pick<Usage, 'webSearches' | 'fileSearches' | 'imageGen'> = {}
  const output = Array.isArray(response.output) ? (response.output as Obj[]) : []
  const tools = response.tool_usage && typeof response.tool_usage === 'object' ? (response.tool_usage as Obj) : undefined
  const billed = count(tools?.web_search?.num_requests)
  const searches = billed ?? output.filter((it) => it?.type === 'web_search_call').length
  if (searches > 0) out.webSearches = searches
  const fileSearches = output.filter((it) => it?.type === 'file_search_call').length
  if (fileSearches > 0) out.fileSearches = fileSearches
  const model = imageModel(response.tools)
  // a call whose usage record is missing may be skipped in the sum: with none counted, the images made are
  const imageGen = (tools?.image_gen && typeof tools.image_gen === 'object' ? imageGenOf(tools.image_gen, model) : undefined) ?? imagesUncounted(output, model)
  if (imageGen) out.imageGen = imageGen
  return out
}
