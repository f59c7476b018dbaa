// What one image of the Responses image generation tool may cost, for a request's hold, and for
// its record when the reply counts none of its tokens. OpenAI's image generation guide gives the
// image output tokens of gpt-image-1 (and 1.5, priced from the same counts) by quality and size;
// a partial image streamed before the final one adds 100 output tokens. Newer models take any
// size up to 3840×2160 and qualities above high, for which no count is published: held at a
// ceiling above the largest reported (gpt-image-2 at 3584×2048, high: about 12,300).
type Obj = Record<string, unknown>

/** Image output tokens of gpt-image-1 and gpt-image-1.5, by quality, then size. */
const TABLE: Record<string, Record<string, number>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
}
/** The models the table counts (a dated snapshot too). */
const TABLED = /^gpt-image-1(\.5)?(-\d{4}-\d{2}-\d{2})?$/
/** Output tokens held for an image of a model, size or quality the table does not count. */
export const IMAGE_TOKENS_MOST = 20_000
/** Output tokens each partial image adds. */
export const TOKENS_A_PARTIAL = 100
/** Partial images a tool may ask for (0 to 3). */
const MOST_PARTIALS = 3

/** The most image output tokens one final image of `model` at `quality` and `size` may be billed (any of them unknown or `auto`: the largest it may be). */
export function imageTokens(model: unknown, quality: unknown, size: unknown): number {
  if (typeof model !== 'string' || !TABLED.test(model)) return IMAGE_TOKENS_MOST
  const qualities = typeof quality === 'string' && Object.hasOwn(TABLE, quality) ? [TABLE[quality]!] : typeof quality === 'string' && quality !== 'auto' ? [] : Object.values(TABLE)
  if (qualities.length === 0) return IMAGE_TOKENS_MOST
  // a size is the table's own entry (`constructor` or `toString` read an Object property: a NaN hold, which holds nothing)
  const sizes = qualities.flatMap((bySize) => (typeof size === 'string' && size !== 'auto' ? [Object.hasOwn(bySize, size) ? bySize[size] : undefined] : Object.values(bySize)))
  return sizes.every((n) => typeof n === 'number') ? Math.max(...(sizes as number[])) : IMAGE_TOKENS_MOST
}

/** The most output tokens one call of an `image_generation` tool may be billed: its image and the partial images it asks for. */
export function imageCallTokens(tool: Obj): number {
  const p = tool.partial_images
  const partials = typeof p === 'number' && Number.isInteger(p) && p > 0 ? Math.min(p, MOST_PARTIALS) : 0
  return imageTokens(tool.model, tool.quality, tool.size) + partials * TOKENS_A_PARTIAL
}
