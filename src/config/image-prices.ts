// OpenAI's image models, run by the Responses image generation tool: their tokens priced at the
// image model's own rates (text in, image in, cached, output), which the price library knows for
// some of them. The tool's model is not always known (a reply need not echo it), and newer ones
// are unknown to the library: either is priced at the dearest rates of the ones it knows, so an
// image is never recorded or held below what it may cost.
import type { ImageGenUsage } from '../ir/types.ts'

/** The image models the price library knows, whose dearest rates price one it does not. */
export const KNOWN_IMAGE_MODELS = ['gpt-image-1', 'gpt-image-1-mini', 'gpt-image-1.5', 'gpt-image-2']

/** Ids of OpenAI's image models: another id named as the tool's model (a cheap chat model's) is not priced as one. */
const IMAGE_MODEL = /^(gpt-image-|chatgpt-image-)/

/** The id to price an image model by, or undefined: priced at the dearest known rates. */
export const imageModelId = (model: string | undefined): string | undefined => (model !== undefined && IMAGE_MODEL.test(model) ? model : undefined)

/** The price library's usage of the image tool's tokens: each detail a part of its total, as the reply counts them. */
export function imageLibraryUsage(g: ImageGenUsage): Record<string, number> {
  const usage: Record<string, number> = { input_tokens: g.inputTokens, output_tokens: g.outputTokens }
  if (g.imageInputTokens) usage.input_image_tokens = g.imageInputTokens
  if (g.cachedTokens) usage.cache_read_tokens = g.cachedTokens
  if (g.cachedImageTokens) usage.cache_image_read_tokens = g.cachedImageTokens
  if (g.imageOutputTokens) usage.output_image_tokens = g.imageOutputTokens
  return usage
}
