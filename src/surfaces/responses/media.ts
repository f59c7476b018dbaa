// A Responses body on the pass-through path: input parts that name a gateway file id (an
// `input_file` or `input_image` with `file_id`, in a message, in a tool's output, or bare in the
// input, which is then one user message; a computer call's screenshot) are read with the
// caller's key and inlined,
// as the chat body's are: the upstream does not know gateway ids, and an id of the
// operator's own upstream account must not be reachable through the gateway. A PDF becomes
// `file_data`, text an `input_text` part, an image an `input_image` data URL. The hosted tools'
// file ids (in `tools` and in an `additional_tools` item) are tool-files.ts's.
import { badRequest } from '../../http/errors.ts'
import { clip, inlineFile, inScope, type MediaDeps, type Scope } from '../../media/source.ts'
import { isObj } from '../../lib/json.ts'
import { resolveToolFiles, toolNeedsWork } from './tool-files.ts'

type Obj = Record<string, unknown>

const isFileIdPart = (p: unknown): p is Obj & { file_id: string } =>
  isObj(p) && (p.type === 'input_file' || p.type === 'input_image') && typeof p.file_id === 'string'
/** Where an item holds parts: a message's `content`, a tool output's `output` (a list of parts there too). */
const partsField = (it: Obj): 'content' | 'output' | undefined => (Array.isArray(it.content) ? 'content' : it.type === 'function_call_output' || it.type === 'custom_tool_call_output' ? (Array.isArray(it.output) ? 'output' : undefined) : undefined)
/** A computer call's output: one screenshot, which may name a file. */
const isScreenshotOfFile = (it: Obj): it is Obj & { output: Obj & { file_id: string } } =>
  it.type === 'computer_call_output' && isObj(it.output) && typeof it.output.file_id === 'string'
/** Tools handed over in the input, as the container check reads them (validate.ts containersNamed). */
const isToolsItem = (it: Obj): it is Obj & { tools: unknown[] } => it.type === 'additional_tools' && Array.isArray(it.tools)
const itemNeedsWork = (it: unknown): it is Obj => {
  if (!isObj(it)) return false
  if (isFileIdPart(it) || isScreenshotOfFile(it)) return true
  if (isToolsItem(it)) return it.tools.some(toolNeedsWork)
  const field = partsField(it)
  return field !== undefined && (it[field] as unknown[]).some(isFileIdPart)
}

async function inlinePart(p: Obj & { file_id: string }, at: string, s: Scope): Promise<Obj> {
  const { file_id, ...rest } = p
  const got = await s.run(() => inlineFile(file_id, s.deps, `${at}.file_id`))
  const named = typeof p.filename === 'string' ? p.filename : undefined
  const src = got.source
  if (src.kind === 'text') return { type: 'input_text', text: named ? `${named}\n\n${src.data}` : src.data }
  if (src.kind !== 'base64') throw new Error('inlineFile gave neither text nor base64')
  const dataUrl = `data:${src.mediaType};base64,${src.data}`
  if (got.kind === 'image') return { type: 'input_image', image_url: dataUrl, detail: p.detail ?? 'auto' }
  return { ...rest, type: 'input_file', filename: named ?? got.filename, file_data: dataUrl }
}

async function inlineScreenshot(shot: Obj & { file_id: string }, at: string, s: Scope): Promise<Obj> {
  const { file_id, ...rest } = shot
  const got = await s.run(() => inlineFile(file_id, s.deps, `${at}.file_id`))
  if (got.kind !== 'image' || got.source.kind !== 'base64') throw badRequest(`${at}.file_id: file ${clip(file_id)} is not an image (a screenshot is one)`)
  return { ...rest, image_url: `data:${got.source.mediaType};base64,${got.source.data}` }
}

/** The input's items with their file ids inlined (or refused); `seen` counts container file ids (tool-files.ts). */
function resolveInput(input: unknown[], s: Scope, seen: { n: number }): Promise<unknown[]> {
  return Promise.all(
    input.map(async (it: unknown, i) => {
      if (!itemNeedsWork(it)) return it
      if (isFileIdPart(it)) return inlinePart(it, `input[${i}]`, s)
      if (isScreenshotOfFile(it)) return { ...it, output: await inlineScreenshot(it.output, `input[${i}].output`, s) }
      if (isToolsItem(it)) return { ...it, tools: await resolveToolFiles(it.tools, `input[${i}].tools`, s, seen) }
      const field = partsField(it)!
      const parts = await Promise.all((it[field] as unknown[]).map((p, j) => (isFileIdPart(p) ? inlinePart(p, `input[${i}].${field}[${j}]`, s) : p)))
      return { ...it, [field]: parts }
    }),
  )
}

/** `body` with every gateway file id in its input and tools inlined (or refused), or `body` itself when it has none. */
export async function resolveResponsesBodyFiles(body: Obj, deps: MediaDeps): Promise<Obj> {
  const { input, tools } = body
  const inputWork = Array.isArray(input) && input.some(itemNeedsWork)
  const toolsWork = Array.isArray(tools) && tools.some(toolNeedsWork)
  if (!inputWork && !toolsWork) return body
  return inScope(deps, async (s) => {
    // the container file ids the request's tools name, counted all together
    const seen = { n: 0 }
    const [outInput, outTools] = await Promise.all([inputWork && resolveInput(input as unknown[], s, seen), toolsWork && resolveToolFiles(tools as unknown[], 'tools', s, seen)])
    const out = { ...body }
    if (outInput) out.input = outInput
    if (outTools) out.tools = outTools
    return out
  })
}
