// An OpenAI chat body on the pass-through path goes upstream as the client sent it, except
// for file parts that name a gateway file id: the upstream does not know those ids
// (and an id of the operator's own upstream account must not be reachable through the
// gateway), so each is read with the caller's key and inlined the way the OpenAI adapter
// sends an IR document: a PDF as `file_data`, text as a text part (after the client's file
// name, if it gave one), an image as an `image_url` data URL.
import { inlineFile, inScope, type MediaDeps, type Scope } from '../../media/source.ts'
import { isObj } from '../../lib/json.ts'

type Obj = Record<string, unknown>

const isFileIdPart = (p: unknown): p is Obj & { file: Obj & { file_id: string } } =>
  isObj(p) && p.type === 'file' && isObj(p.file) && typeof p.file.file_id === 'string'
const messageNeedsWork = (m: unknown): m is Obj & { content: unknown[] } => isObj(m) && Array.isArray(m.content) && m.content.some(isFileIdPart)

async function inlinePart(p: Obj & { file: Obj & { file_id: string } }, at: string, s: Scope): Promise<Obj> {
  const { file, ...rest } = p // rest keeps what the part carried beside `file` (cache_control)
  const got = await s.run(() => inlineFile(file.file_id, s.deps, `${at}.file.file_id`))
  const named = typeof file.filename === 'string' ? file.filename : undefined
  const src = got.source
  if (src.kind === 'text') return { ...rest, type: 'text', text: named ? `${named}\n\n${src.data}` : src.data }
  if (src.kind !== 'base64') throw new Error('inlineFile gave neither text nor base64')
  const dataUrl = `data:${src.mediaType};base64,${src.data}`
  if (got.kind === 'image') return { ...rest, type: 'image_url', image_url: { url: dataUrl } }
  return { ...rest, type: 'file', file: { filename: named ?? got.filename, file_data: dataUrl } }
}

/**
 * `body` with every `{type:'file', file:{file_id}}` content part inlined, or `body` itself
 * when it has none. Another key's id or an unknown one is a 400 naming it
 * (`messages[1].content[0].file.file_id: no such file file-abc`). `body` is not changed.
 */
export async function resolveChatBodyFiles(body: Obj, deps: MediaDeps): Promise<Obj> {
  const messages = body.messages
  if (!Array.isArray(messages) || !messages.some(messageNeedsWork)) return body
  return inScope(deps, async (s) => {
    const out = await Promise.all(
      messages.map(async (m: unknown, i) => {
        if (!messageNeedsWork(m)) return m
        const content = await Promise.all(m.content.map((p, j) => (isFileIdPart(p) ? inlinePart(p, `messages[${i}].content[${j}]`, s) : p)))
        return { ...m, content }
      }),
    )
    return { ...body, messages: out }
  })
}
