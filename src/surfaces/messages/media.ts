// An Anthropic messages body on the pass-through path goes upstream as the client sent it,
// except for media the upstream cannot reach: `document` and `image` blocks whose source is
// a gateway file id (the upstream does not know those ids) are read with the caller's key
// and inlined; a `document` URL is fetched through the guard and embedded (the gateway
// fetches document URLs for both families: no upstream reaches the client's network). Image URLs go as they are, unless the
// caller asks for their bytes. Blocks are found in messages[].content[], inside tool_result
// content, and in `system` when it is a list of blocks.
import { badRequest } from '../../http/errors.ts'
import type { MediaSource } from '../../ir/types.ts'
import type { Inlined } from '../../media/inline.ts'
import { inlineFile, inlineUrl, inScope, type MediaDeps, type Scope } from '../../media/source.ts'
import { isObj } from '../../lib/json.ts'

type Obj = Record<string, unknown>

export interface MessagesMediaOptions {
  /** Fetch image URLs too (for an upstream that cannot take them). */
  fetchImageUrls?: boolean
}

function blockNeedsWork(b: unknown, o: MessagesMediaOptions): boolean {
  if (!isObj(b)) return false
  if (b.type === 'document' || b.type === 'image') {
    const t = isObj(b.source) ? b.source.type : undefined
    return t === 'file' || (t === 'url' && (b.type === 'document' || o.fetchImageUrls === true))
  }
  return b.type === 'tool_result' && Array.isArray(b.content) && b.content.some((c) => blockNeedsWork(c, o))
}

function wireSource(src: MediaSource): Obj {
  if (src.kind === 'text') return { type: 'text', media_type: 'text/plain', data: src.data }
  if (src.kind === 'base64') return { type: 'base64', media_type: src.mediaType, data: src.data }
  throw new Error(`an inlined source is text or base64, not ${src.kind}`)
}

function fetchSource(source: Obj, at: string, s: Scope): Promise<Inlined> {
  const field = source.type === 'file' ? 'file_id' : 'url'
  const value = source[field]
  if (typeof value !== 'string') throw badRequest(`${at}.source.${field}: expected a string`)
  return s.run(() => (field === 'file_id' ? inlineFile(value, s.deps, `${at}.source.file_id`) : inlineUrl(value, s.deps, `${at}.source.url`)))
}

const KIND_WORDS = { pdf: 'a PDF', text: 'text', image: 'an image' } as const

async function resolveBlock(b: unknown, at: string, o: MessagesMediaOptions, s: Scope): Promise<unknown> {
  if (!blockNeedsWork(b, o)) return b
  const block = b as Obj
  if (block.type === 'tool_result') return { ...block, content: await resolveBlocks(block.content as unknown[], `${at}.content`, o, s) }
  const got = await fetchSource(block.source as Obj, at, s)
  if (block.type === 'image' && got.kind !== 'image') throw badRequest(`${at}.source: expected an image, got ${KIND_WORDS[got.kind]}`)
  if (block.type === 'document' && got.kind === 'image') {
    // an image named as a document: sent as the image block it is (title, context and
    // citations belong to documents and go)
    const img: Obj = { type: 'image', source: wireSource(got.source) }
    if (block.cache_control !== undefined) img.cache_control = block.cache_control
    return img
  }
  return { ...block, source: wireSource(got.source) }
}

function resolveBlocks(blocks: unknown[], at: string, o: MessagesMediaOptions, s: Scope): Promise<unknown[]> | unknown[] {
  if (!blocks.some((b) => blockNeedsWork(b, o))) return blocks
  return Promise.all(blocks.map((b, j) => resolveBlock(b, `${at}[${j}]`, o, s)))
}

/**
 * `body` with its file-id media and document URLs inlined, or `body` itself when it has
 * none. A refused source is a 400 naming its path (`messages[0].content[1].source.url: …`,
 * `system[0].source.file_id: …`). `body` is not changed.
 */
export async function resolveMessagesBodyMedia(body: Obj, deps: MediaDeps, opts: MessagesMediaOptions = {}): Promise<Obj> {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : []
  const messageNeeds = (m: unknown) => isObj(m) && Array.isArray(m.content) && m.content.some((b) => blockNeedsWork(b, opts))
  const system = Array.isArray(body.system) ? (body.system as unknown[]) : undefined
  const systemNeeds = system?.some((b) => blockNeedsWork(b, opts)) === true
  if (!systemNeeds && !messages.some(messageNeeds)) return body
  return inScope(deps, async (s) => {
    const [sys, msgs] = await Promise.all([
      systemNeeds ? resolveBlocks(system!, 'system', opts, s) : body.system,
      Promise.all(messages.map(async (m, i) => (messageNeeds(m) ? { ...(m as Obj), content: await resolveBlocks((m as Obj).content as unknown[], `messages[${i}].content`, opts, s) } : m))),
    ])
    const out: Obj = { ...body, messages: msgs }
    if (systemNeeds) out.system = sys
    return out
  })
}
