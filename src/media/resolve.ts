// File ids and media URLs, resolved before a generation goes upstream (spec §4.6 media
// sources, issue 9 D8). An upstream knows nothing of the gateway's file ids, so a file is
// read with the CALLER's key (another key's id looks exactly like a missing one) and
// inlined; a document URL is fetched through the guard and embedded, for both families;
// image URLs stay URLs (both upstreams take them). A request with neither costs a scan.
import type { ApiKey } from '../auth/context.ts'
import type { Config } from '../config/load.ts'
import type { GenerationRequest, Part } from '../ir/types.ts'
import type { MediaResolver } from '../pipeline/generate.ts'
import type { FetchPolicy } from './fetch.ts'
import { isImage, resolveSource, type MediaDeps } from './source.ts'
import { resolveAnthropicBody, resolveChatBody } from './wire.ts'

const needsWork = (p: Part): boolean =>
  ((p.type === 'document' || p.type === 'image') && (p.source.kind === 'file' || (p.type === 'document' && p.source.kind === 'url'))) ||
  (p.type === 'tool-result' && typeof p.content !== 'string' && p.content.some(needsWork))

async function resolvePart(p: Part, key: ApiKey, deps: MediaDeps, at: string): Promise<Part> {
  if (!needsWork(p)) return p
  if (p.type === 'image') return { ...p, source: await resolveSource(p.source, 'image', key, deps, `${at}.source`) }
  if (p.type === 'document') {
    const source = await resolveSource(p.source, 'document', key, deps, `${at}.source`)
    // an image file named in a document block goes as an image: no upstream takes an image document
    return isImage(source) ? { type: 'image', source, cacheControl: p.cacheControl } : { ...p, source }
  }
  if (p.type === 'tool-result' && typeof p.content !== 'string') {
    const content: Part[] = []
    for (const [k, c] of p.content.entries()) content.push(await resolvePart(c, key, deps, `${at}.content[${k}]`))
    return { ...p, content }
  }
  return p
}

async function resolveParts(parts: Part[], key: ApiKey, deps: MediaDeps, at: string): Promise<Part[]> {
  const out: Part[] = []
  for (const [j, p] of parts.entries()) out.push(await resolvePart(p, key, deps, `${at}[${j}]`))
  return out
}

/** The request with every file id and document URL inlined; the same object when there is none. */
export async function resolveRequestMedia(req: GenerationRequest, key: ApiKey, deps: MediaDeps): Promise<GenerationRequest> {
  const any = (req.system ?? []).some(needsWork) || req.messages.some((m) => m.content.some(needsWork))
  if (!any) return req
  const messages = []
  for (const [i, m] of req.messages.entries()) messages.push(m.content.some(needsWork) ? { ...m, content: await resolveParts(m.content, key, deps, `messages[${i}].content`) } : m)
  const out: GenerationRequest = { ...req, messages }
  if (req.system) out.system = await resolveParts(req.system, key, deps, 'system')
  return out
}

export function fetchPolicy(config: Pick<Config, 'media'>): FetchPolicy {
  return { allowPrivate: config.media.allowPrivateUrls, maxBytes: config.media.maxBytes, timeoutMs: config.media.timeoutMs }
}

export function createMediaResolver(deps: MediaDeps): MediaResolver {
  return {
    ir: (req, rc) => resolveRequestMedia(req, rc.apiKey, deps),
    passthrough: async (wire, body, rc) => {
      if (wire === 'openai.chat') return resolveChatBody(body, rc.apiKey, deps)
      if (wire === 'anthropic.messages') return resolveAnthropicBody(body, rc.apiKey, deps)
      return body
    },
  }
}
