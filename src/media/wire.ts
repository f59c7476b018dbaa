// The pass-through bodies' media, resolved in their own wire: the body goes upstream as is
// otherwise. Returns the same object when no block needs work (a scan of the blocks).
import type { ApiKey } from '../auth/context.ts'
import { badRequest } from '../http/errors.ts'
import type { MediaSource } from '../ir/types.ts'
import { isImage, resolveSource, type MediaDeps } from './source.ts'

type Obj = Record<string, any>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** OpenAI chat: `{type:'file', file:{file_id}}` parts → the file's bytes as `file_data` (D8). */
export async function resolveChatBody(body: Obj, key: ApiKey, deps: MediaDeps): Promise<Obj> {
  const messages = Array.isArray(body.messages) ? body.messages : []
  const hasFileId = (m: unknown) => isObj(m) && Array.isArray(m.content) && m.content.some((p: unknown) => isObj(p) && p.type === 'file' && isObj(p.file) && typeof p.file.file_id === 'string')
  if (!messages.some(hasFileId)) return body
  const out: Obj[] = []
  for (const [i, m] of messages.entries()) {
    if (!hasFileId(m)) {
      out.push(m)
      continue
    }
    const content: Obj[] = []
    for (const [j, p] of (m.content as Obj[]).entries()) {
      if (!(p?.type === 'file' && isObj(p.file) && typeof p.file.file_id === 'string')) {
        content.push(p)
        continue
      }
      const at = `messages[${i}].content[${j}].file`
      const src = await resolveSource({ kind: 'file', fileId: p.file.file_id }, 'document', key, deps, at)
      const filename = typeof p.file.filename === 'string' ? p.file.filename : deps.files.resolveForKey(p.file.file_id, key)?.filename ?? 'document'
      content.push(chatFilePart(src, filename, at))
    }
    out.push({ ...m, content })
  }
  return { ...body, messages: out }
}

function chatFilePart(src: MediaSource, filename: string, at: string): Obj {
  if (src.kind === 'text') return { type: 'text', text: src.data }
  if (src.kind === 'base64' && src.mediaType.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${src.mediaType};base64,${src.data}` } }
  if (src.kind === 'base64') return { type: 'file', file: { filename, file_data: `data:${src.mediaType};base64,${src.data}` } }
  throw badRequest(`${at}: cannot be inlined`)
}

const WORK_SOURCES: Record<string, ReadonlySet<string>> = { document: new Set(['file', 'url']), image: new Set(['file']) }
const blockNeedsWork = (b: unknown): boolean =>
  isObj(b) && ((isObj(b.source) && WORK_SOURCES[b.type]?.has(b.source.type) === true) || (b.type === 'tool_result' && Array.isArray(b.content) && b.content.some(blockNeedsWork)))

function wireSource(src: MediaSource): Obj {
  if (src.kind === 'text') return { type: 'text', media_type: 'text/plain', data: src.data }
  if (src.kind === 'base64') return { type: 'base64', media_type: src.mediaType, data: src.data }
  return { type: 'url', url: (src as { url: string }).url }
}

async function anthropicBlock(b: unknown, key: ApiKey, deps: MediaDeps, at: string): Promise<unknown> {
  if (!blockNeedsWork(b)) return b
  const o = b as Obj
  if (o.type === 'tool_result') return { ...o, content: await anthropicBlocks(o.content, key, deps, `${at}.content`) }
  const s = o.source as Obj
  const src: MediaSource = s.type === 'file' ? { kind: 'file', fileId: String(s.file_id) } : { kind: 'url', url: String(s.url) }
  const resolved = await resolveSource(src, o.type === 'image' ? 'image' : 'document', key, deps, `${at}.source`)
  // an image file named in a document block goes as an image block (documents take no
  // images); otherwise the block stays and only its source changes
  if (o.type === 'document' && isImage(resolved)) return o.cache_control === undefined ? { type: 'image', source: wireSource(resolved) } : { type: 'image', source: wireSource(resolved), cache_control: o.cache_control }
  return { ...o, source: wireSource(resolved) }
}

async function anthropicBlocks(blocks: unknown[], key: ApiKey, deps: MediaDeps, at: string): Promise<unknown[]> {
  const out: unknown[] = []
  for (const [j, b] of blocks.entries()) out.push(await anthropicBlock(b, key, deps, `${at}[${j}]`))
  return out
}

/** Anthropic messages: document and image blocks with a file id, and document URLs, inlined. */
export async function resolveAnthropicBody(body: Obj, key: ApiKey, deps: MediaDeps): Promise<Obj> {
  const messages = Array.isArray(body.messages) ? body.messages : []
  const msgNeeds = (m: unknown) => isObj(m) && Array.isArray(m.content) && m.content.some(blockNeedsWork)
  const systemNeeds = Array.isArray(body.system) && body.system.some(blockNeedsWork)
  if (!systemNeeds && !messages.some(msgNeeds)) return body
  const out: Obj = { ...body }
  if (systemNeeds) out.system = await anthropicBlocks(body.system, key, deps, 'system')
  const resolved: unknown[] = []
  for (const [i, m] of messages.entries()) resolved.push(msgNeeds(m) ? { ...m, content: await anthropicBlocks(m.content, key, deps, `messages[${i}].content`) } : m)
  out.messages = resolved
  return out
}

