// The priced parts of a reply's usage beyond the record's token columns: hour-long cache writes,
// audio tokens, web and file searches, the image tool's tokens, new code-interpreter containers. Its cost counts them, so the
// record keeps them to explain it. Most replies have none: the record then stores null, and
// only a reply with at least one keeps a small JSON object (in the words the record shows).
import type { ImageGenUsage, Usage } from '../ir/types.ts'
import { containerCounts } from '../billing/containers.ts'

/** A count as stored: a finite positive integer, else none. */
const count = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0)

/** The counts kept, by their name in the record, with the most of each the cost counts (its part of a bucket). */
const COUNTS: [name: string, of: (u: Usage) => number][] = [
  ['cache_write_1h_tokens', (u) => Math.min(count(u.cacheWrite1hTokens), count(u.cacheWriteTokens))],
  ['audio_input_tokens', (u) => Math.min(count(u.inputAudioTokens), count(u.inputTokens))],
  ['audio_output_tokens', (u) => Math.min(count(u.outputAudioTokens), count(u.outputTokens))],
  ['web_searches', (u) => count(u.webSearches)],
  ['file_searches', (u) => count(u.fileSearches)],
]

/** The image tool's counts, by their name in the record's `image_tool`. */
const IMAGE_COUNTS: [name: string, key: Exclude<keyof ImageGenUsage, 'model'>][] = [
  ['input_tokens', 'inputTokens'],
  ['image_input_tokens', 'imageInputTokens'],
  ['cached_tokens', 'cachedTokens'],
  ['cached_image_tokens', 'cachedImageTokens'],
  ['output_tokens', 'outputTokens'],
  ['image_output_tokens', 'imageOutputTokens'],
]

/** The stored column: null when the usage has none of the extras (the common record: no object is made). */
export function extrasOf(u: Usage): string | null {
  if (u.cacheWrite1hTokens === undefined && u.inputAudioTokens === undefined && u.outputAudioTokens === undefined && u.webSearches === undefined && u.fileSearches === undefined && u.imageGen === undefined && u.containers === undefined) return null
  const out: Record<string, unknown> = {}
  for (const [name, of] of COUNTS) {
    const n = of(u)
    if (n > 0) out[name] = n
  }
  const g = u.imageGen
  if (g) {
    const tool: Record<string, unknown> = {}
    for (const [name, key] of IMAGE_COUNTS) {
      const n = count(g[key])
      if (n > 0) tool[name] = n
    }
    if (Object.keys(tool).length > 0) out.image_tool = { model: typeof g.model === 'string' ? g.model : null, ...tool }
  }
  const made = containerCounts(u.containers)
  if (made) out.code_interpreter_containers = made
  return Object.keys(out).length > 0 ? JSON.stringify(out) : null
}

/** What the record shows of a stored column: its known counts only (nothing for null, or text that is not one). */
export function extrasWire(stored: string | null): Record<string, unknown> | undefined {
  if (stored === null) return undefined
  let v: unknown
  try {
    v = JSON.parse(stored)
  } catch {
    return undefined
  }
  if (typeof v !== 'object' || v === null) return undefined
  const o = v as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [name] of COUNTS) if (count(o[name]) > 0) out[name] = count(o[name])
  const t = o.image_tool as Record<string, unknown> | undefined
  if (typeof t === 'object' && t !== null) {
    const tool: Record<string, unknown> = { model: typeof t.model === 'string' ? t.model : null }
    for (const [name] of IMAGE_COUNTS) tool[name] = count(t[name])
    out.image_tool = tool
  }
  const made = containerCounts(o.code_interpreter_containers)
  if (made) out.code_interpreter_containers = made
  return Object.keys(out).length > 0 ? out : undefined
}

/**
 * What the hourly rollup sums of the column, by its name there: each the stored counts at these
 * paths added up (the image tool's input and output tokens together, beside the model's own).
 * The report's records query reads the same paths in SQL (usage/query.ts).
 */
export const EXTRAS_SUMS = {
  cacheWrite1hTokens: [['cache_write_1h_tokens']],
  inputAudioTokens: [['audio_input_tokens']],
  outputAudioTokens: [['audio_output_tokens']],
  webSearchRequests: [['web_searches']],
  fileSearchRequests: [['file_searches']],
  imageToolTokens: [['image_tool', 'input_tokens'], ['image_tool', 'output_tokens']],
} as const satisfies Record<string, readonly (readonly string[])[]>

export type ExtrasSum = keyof typeof EXTRAS_SUMS

const NO_EXTRAS: Readonly<Record<ExtrasSum, number>> = Object.freeze(Object.fromEntries(Object.keys(EXTRAS_SUMS).map((k) => [k, 0])) as Record<ExtrasSum, number>)

/** The rollup's sums of a stored column: 0 each for null (the common record: one shared object, nothing parsed). */
export function extrasSums(stored: string | null): Readonly<Record<ExtrasSum, number>> {
  if (stored === null) return NO_EXTRAS
  const shown = extrasWire(stored)
  const out = {} as Record<ExtrasSum, number>
  for (const [sum, paths] of Object.entries(EXTRAS_SUMS) as [ExtrasSum, readonly (readonly string[])[]][]) {
    out[sum] = 0
    if (shown) for (const path of paths) out[sum] += count(path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], shown))
  }
  return out
}
