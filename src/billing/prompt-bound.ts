// An upper bound on a request's prompt tokens, for the credit reservation taken before the call.
// It must never be below what the request is billed: every part of the body that becomes
// prompt counts (system, instructions, messages, tool results, tools with their schemas,
// thread history the surface loaded), whatever the script. Byte-level BPE tokenizers (o200k,
// Claude's) make at least one byte of each token, so a text's UTF-8 byte length bounds its
// tokens from above; characters ÷ 4 undercounts CJK up to 8×. The JSON around the text (keys,
// roles) stands in for the per-message overhead a provider adds. Images are billed by their
// pixels, not their bytes: a base64 image counts as the most one image costs, and so does an
// image named by URL (the upstream fetches it). A document named by URL is fetched and put in
// the prompt after admission (by the gateway, or by OpenAI for a `file_url`), so its size is
// not known here: the request counts the largest prompt any model takes.
//
// It walks the value with a stack of its own (no recursion: any depth), once, in time linear
// in the body; Buffer.byteLength is native. The same walk notes the cache breakpoints it passes
// (prompt-writes.ts): they say at what price the prompt can be billed.

import { breakpointWrites, dearerWrites, type PromptWrites } from './prompt-writes.ts'

/** The most one image costs on either family (OpenAI high detail tiles, Claude's resize cap), with room. */
export const IMAGE_TOKENS = 2_600
/** A document (PDF) is billed per page as an image plus its text: a floor for one whose bytes say little. */
export const DOCUMENT_TOKENS = 3_000
/**
 * A request with a document named by URL: no upstream takes a prompt longer than its model's
 * context window (1,047,576 tokens at most, GPT-4.1; Claude's 1M beta), and a refused one costs
 * nothing, so this many tokens bound whatever the documents hold.
 */
export const URL_DOCUMENT_TOKENS = 2 ** 20

const isUrl = (v: unknown): v is string => typeof v === 'string' && /^https?:/i.test(v)

const BASE64_URL = /^data:([\w.+-]+\/[\w.+-]+)?[^,]*;base64,/

const isImageType = (t: unknown) => typeof t === 'string' && t.startsWith('image/')

/** Tokens a string can cost: an image data URL at the image rate, any other text by its bytes. */
function stringBound(s: string): number {
  if (s.length > 64 && s.charCodeAt(0) === 100 /* d */ && s.startsWith('data:')) {
    const m = BASE64_URL.exec(s.slice(0, 256))
    if (m) return isImageType(m[1]) ? IMAGE_TOKENS : Math.max(DOCUMENT_TOKENS, s.length)
  }
  return Buffer.byteLength(s, 'utf8')
}

/**
 * An Anthropic base64 source (`{type: 'base64', media_type, data}`) or an OpenAI file part
 * (`file_data`) holds binary data: an image counts at the image rate, anything else by its
 * base64 length (more than its decoded bytes) with a document's floor.
 */
function binaryBound(o: Record<string, unknown>): number | undefined {
  if (o.type === 'base64' && typeof o.data === 'string') return isImageType(o.media_type) ? IMAGE_TOKENS : Math.max(DOCUMENT_TOKENS, o.data.length)
  return undefined
}

/**
 * What an image named by URL can cost beyond its text: Anthropic's `{type: 'image', source:
 * {type: 'url'}}`, chat's `image_url: {url}`, responses' `input_image` with an `image_url`.
 */
function imageUrlBound(o: Record<string, unknown>): number {
  const t = o.type
  if (t === 'image') return isUrl((o.source as Record<string, unknown> | undefined)?.url) ? IMAGE_TOKENS : 0
  if (t === 'image_url') return isUrl((o.image_url as Record<string, unknown> | undefined)?.url) ? IMAGE_TOKENS : 0
  if (t === 'input_image') return isUrl(o.image_url) ? IMAGE_TOKENS : 0
  return 0
}

/** A document named by URL: Anthropic's `{type: 'document', source: {type: 'url'}}`, responses' `input_file` with a `file_url`. */
function isUrlDocument(o: Record<string, unknown>): boolean {
  if (o.type === 'document') return isUrl((o.source as Record<string, unknown> | undefined)?.url)
  return o.type === 'input_file' && isUrl(o.file_url)
}

/** A prompt's bound: its tokens, and the dearest cache write its breakpoints can bill them at. */
export interface PromptBound {
  tokens: number
  writes: PromptWrites
}

/** The bound of a request's prompt, read in one walk, and read once however often it is asked for (a plan's admission and its fallbacks'). */
export function boundOnce(walk: () => PromptBound): { promptTokens(): number; promptWrites(): PromptWrites } {
  let bound: PromptBound | undefined
  const read = () => (bound ??= walk())
  return { promptTokens: () => read().tokens, promptWrites: () => read().writes }
}

export function promptBound(...values: unknown[]): PromptBound {
  let total = 0
  let urlDocument = false
  let writes: PromptWrites = 'none'
  const stack: unknown[] = [...values]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'string') total += stringBound(v) + 1
    else if (typeof v === 'number' || typeof v === 'boolean') total += 4
    else if (Array.isArray(v)) {
      total += 1
      for (let i = 0; i < v.length; i++) stack.push(v[i])
    } else if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>
      // a breakpoint (Anthropic's cache_control, at the top level too; OpenAI's, translated for Claude)
      if (o.cache_control !== undefined || o.prompt_cache_breakpoint !== undefined) writes = dearerWrites(writes, breakpointWrites(o))
      const binary = binaryBound(o)
      if (binary !== undefined) {
        total += binary
        continue
      }
      if (typeof o.type === 'string') {
        total += imageUrlBound(o)
        urlDocument ||= isUrlDocument(o)
      }
      for (const k in o) {
        if (!Object.hasOwn(o, k)) continue
        total += k.length + 2
        stack.push(o[k])
      }
    }
  }
  return { tokens: urlDocument ? total + URL_DOCUMENT_TOKENS : total, writes }
}

/** At most this many distinct files of one request are looked up for the bound. */
const MAX_FILE_REFS = 100

/**
 * The gateway files a request names where their bytes go upstream, each with how many times:
 * every copy is read and sent. `more`: it names other files past those looked up.
 */
export interface FileRefs {
  counts: Map<string, number>
  more: boolean
}

type Obj = Record<string, unknown>
const fileIdIn = (v: unknown): unknown => (v !== null && typeof v === 'object' ? (v as Obj).file_id : undefined)

/**
 * The file ids an object of each type has read and inlined (the surfaces' media.ts and
 * tool-files.ts), where it is found. Any other `file_id` (a citation's in a reply's text, a file
 * search's result, a container's upload) names a file whose bytes are never sent as prompt.
 */
const SENT_FILES: Record<string, (o: Obj) => unknown[]> = {
  // Responses parts, in a message, a tool's output or bare in the input
  input_file: (o) => [o.file_id],
  input_image: (o) => [o.file_id],
  // Messages: a document's or an image's source; chat: a file part's `file`
  file: (o) => [o.file_id, fileIdIn(o.file)],
  // Responses: a computer call's screenshot; the image tool's mask
  computer_call_output: (o) => [fileIdIn(o.output)],
  image_generation: (o) => [fileIdIn(o.input_image_mask)],
}

export function fileRefsOf(...values: unknown[]): FileRefs {
  const counts = new Map<string, number>()
  let more = false
  const count = (x: unknown) => {
    if (typeof x !== 'string') return
    const n = counts.get(x)
    if (n !== undefined) counts.set(x, n + 1)
    else if (counts.size < MAX_FILE_REFS) counts.set(x, 1)
    else more = true
  }
  const stack: unknown[] = [...values]
  while (stack.length > 0) {
    const v = stack.pop()
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push(v[i])
    else if (v !== null && typeof v === 'object') {
      const o = v as Obj
      if (typeof o.type === 'string' && Object.hasOwn(SENT_FILES, o.type)) SENT_FILES[o.type]!(o).forEach(count)
      for (const k in o) if (Object.hasOwn(o, k) && typeof o[k] === 'object') stack.push(o[k])
    }
  }
  return { counts, more }
}

/**
 * Tokens the files a request names can cost, from their sizes (the files are read later, when
 * the request is sent): an image at the most one image costs, anything else by its bytes with a
 * document's floor, once for each time it is named. A file the key cannot read counts nothing
 * (the request fails on it later). Files past those looked up count as the largest prompt any
 * model takes, as a document named by URL does.
 */
export async function fileTokenBound(refs: FileRefs, sizeOf: (id: string) => Promise<{ bytes: number; image: boolean } | null>): Promise<number> {
  let total = refs.more ? URL_DOCUMENT_TOKENS : 0
  for (const [id, times] of refs.counts) {
    const f = await sizeOf(id)
    if (f) total += times * (f.image ? IMAGE_TOKENS : Math.max(DOCUMENT_TOKENS, f.bytes))
  }
  return total
}
