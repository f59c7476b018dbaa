// Media sources of an IR request (file ids, URLs, inline data), resolved before it goes
// upstream. Upstreams know nothing of the gateway's file ids, so a file id is read with the
// caller's key and inlined; a document URL is fetched through the guard and embedded, for both families (a PDF as base64, text as a text source); image
// URLs stay URLs (both families' upstreams take them) unless the target asks for bytes.
// A file or URL that turns out to be an image, named in a document block, becomes an image
// part: no upstream takes an image as a document.
// A request without such a source costs one scan and comes back as the same object.
import type { ApiKey } from '../http/context.ts'
import { badRequest } from '../http/errors.ts'
import type { Family, GenerationRequest, MediaSource, Part } from '../ir/types.ts'
import type { FetchPolicy } from './fetch.ts'
import type { Inlined } from './inline.ts'
import { inlineFile, inlineUrl, inScope, type MediaDeps, type Scope } from './source.ts'

export { fetchPolicy } from './fetch.ts'
export type { MediaDeps } from './source.ts'

export interface MediaTarget {
  /** The upstream's family. Both take image URLs and neither a file id or document URL, so today it does not change the result. */
  family: Family
  /** The upstream cannot take an image by URL (the mock provider, future upstreams): fetch it. */
  fetchImageUrls?: boolean
}

const needsWork = (p: Part, t: MediaTarget): boolean => {
  if (p.type === 'document') return p.source.kind === 'file' || p.source.kind === 'url'
  if (p.type === 'image') return p.source.kind === 'file' || (p.source.kind === 'url' && t.fetchImageUrls === true)
  return p.type === 'tool-result' && typeof p.content !== 'string' && p.content.some((c) => needsWork(c, t))
}

const KIND_WORDS = { pdf: 'a PDF', text: 'text', image: 'an image' } as const

async function inline(src: MediaSource, at: string, s: Scope): Promise<Inlined> {
  if (src.kind === 'file') return s.run(() => inlineFile(src.fileId, s.deps, src.at ?? `${at}.source.file_id`))
  if (src.kind === 'url') return s.run(() => inlineUrl(src.url, s.deps, src.at ?? `${at}.source.url`))
  throw new Error(`inline: a ${src.kind} source needs no work`)
}

async function resolvePart(p: Part, at: string, t: MediaTarget, s: Scope): Promise<Part> {
  if (!needsWork(p, t)) return p
  if (p.type === 'tool-result') return { ...p, content: await resolveParts(p.content as Part[], `${at}.content`, t, s) }
  if (p.type !== 'document' && p.type !== 'image') return p
  const got = await inline(p.source, at, s)
  if (p.type === 'image') {
    if (got.kind !== 'image') throw badRequest(`${'at' in p.source && p.source.at !== undefined ? p.source.at : `${at}.source`}: expected an image, got ${KIND_WORDS[got.kind]}`)
    return { ...p, source: got.source }
  }
  if (got.kind === 'image') {
    const img: Part = { type: 'image', source: got.source }
    if (p.cacheControl !== undefined) img.cacheControl = p.cacheControl
    return img
  }
  // a GPT model's file part (a PDF) is named: the stored file's name, not a made-up `document.pdf`
  if (t.family === 'openai' && p.title === undefined && got.source.kind === 'base64' && 'filename' in got && typeof got.filename === 'string') return { ...p, source: got.source, title: got.filename }
  return { ...p, source: got.source }
}

function resolveParts(parts: Part[], at: string, t: MediaTarget, s: Scope): Promise<Part[]> | Part[] {
  if (!parts.some((p) => needsWork(p, t))) return parts
  return Promise.all(parts.map((p, j) => resolvePart(p, `${at}[${j}]`, t, s)))
}

/**
 * `req` with every file id and document URL inlined (and image URLs, when the target asks),
 * or `req` itself when there is none. A refused source is a 400 naming its path:
 * `messages[i].content[j]…` (the wire request's indexes) or `system[k]…`.
 */
export async function resolveMedia(req: GenerationRequest, deps: MediaDeps, target: MediaTarget): Promise<GenerationRequest> {
  const needs = (p: Part) => needsWork(p, target)
  if (!(req.system?.some(needs) || req.messages.some((m) => m.content.some(needs)))) return req
  return inScope(deps, async (s) => {
    const [system, messages] = await Promise.all([
      req.system && resolveParts(req.system, 'system', target, s),
      Promise.all(req.messages.map(async (m, i) => (m.content.some(needs) ? { ...m, content: await resolveParts(m.content, `messages[${i}].content`, target, s) } : m))),
    ])
    const out: GenerationRequest = { ...req, messages }
    if (system) out.system = system
    return out
  })
}

/** What the pipeline hands the resolver (structurally its RequestContext and CatalogModel). */
export interface CallerOf {
  apiKey: ApiKey
  signal?: AbortSignal
}

export interface MediaResolverOptions {
  files: MediaDeps['files']
  policy: FetchPolicy
  /** Models whose upstream needs image bytes rather than URLs; none by default. */
  fetchImageUrls?: (model: { family: Family; provider?: string }) => boolean
}

/**
 * The pipeline's media step (src/pipeline/surface.ts `MediaResolver`): the IR path here, and a
 * pass-through body by its surface's own rewriter (the plan's `resolveMedia`).
 */
export function createMediaResolver(opts: MediaResolverOptions) {
  const deps = (rc: CallerOf): MediaDeps => ({ files: opts.files, policy: opts.policy, key: rc.apiKey, signal: rc.signal })
  return {
    ir: (req: GenerationRequest, rc: CallerOf, model: { family: Family; provider?: string }) =>
      resolveMedia(req, deps(rc), { family: model.family, fetchImageUrls: opts.fetchImageUrls?.(model) ?? false }),
    passthrough: async (plan: { body: Record<string, unknown>; resolveMedia?: (deps: MediaDeps) => Promise<Record<string, unknown>> }, rc: CallerOf) =>
      plan.resolveMedia ? plan.resolveMedia(deps(rc)) : plan.body,
  }
}
