// File ids in a Responses body's hosted tools, on the pass-through path. The upstream never saw
// the gateway's files, and an id it does know is of the operator's account, so:
// - the image generation tool's `input_image_mask: { file_id }` naming the caller's own file is
//   read with its key and sent as `image_url`, a data URL, as an `input_image` part's is; an id
//   that is not the key's file is refused as an input_image's is (no such file);
// - a code interpreter's new container `{ type: 'auto', file_ids }` has its files copied in by
//   the upstream, which cannot copy the gateway's: an id naming the caller's own file is a 400
//   saying how to give the content instead. Any other id goes up as given: an operator resource
//   named by id is the account's to share (as `vector_store_ids`).
import { badRequest } from '../../http/errors.ts'
import { clip, inlineFile, type Scope } from '../../media/source.ts'
import { isObj } from '../../lib/json.ts'

type Obj = Record<string, unknown>

/** File ids one request's containers may name: each is looked up, so they are bounded. */
const MAX_CONTAINER_FILE_IDS = 100

const hasMaskFile = (t: Obj): t is Obj & { input_image_mask: Obj & { file_id: string } } =>
  t.type === 'image_generation' && isObj(t.input_image_mask) && typeof t.input_image_mask.file_id === 'string'
const containerFileIds = (t: Obj): unknown[] | undefined =>
  t.type === 'code_interpreter' && isObj(t.container) && Array.isArray(t.container.file_ids) && t.container.file_ids.length > 0 ? t.container.file_ids : undefined

/** Whether a tool names a file this module reads. */
export const toolNeedsWork = (t: unknown): t is Obj => isObj(t) && (hasMaskFile(t) || containerFileIds(t) !== undefined)

async function inlineMask(t: Obj & { input_image_mask: Obj & { file_id: string } }, at: string, s: Scope): Promise<Obj> {
  const { file_id, ...rest } = t.input_image_mask
  const where = `${at}.input_image_mask.file_id`
  const got = await s.run(() => inlineFile(file_id, s.deps, where))
  if (got.kind !== 'image' || got.source.kind !== 'base64') throw badRequest(`${where}: file ${clip(file_id)} is not an image (an image mask is one)`)
  return { ...t, input_image_mask: { ...rest, image_url: `data:${got.source.mediaType};base64,${got.source.data}` } }
}

/** The container's ids checked: one of the caller's own gateway files is refused, any other goes up. */
async function checkContainerFiles(ids: unknown[], at: string, s: Scope, seen: { n: number }): Promise<void> {
  const where = `${at}.container.file_ids`
  seen.n += ids.length
  if (seen.n > MAX_CONTAINER_FILE_IDS) throw badRequest(`${where}: more than ${MAX_CONTAINER_FILE_IDS} container file ids in one request`)
  const owned = await Promise.all(ids.map((id) => (typeof id === 'string' ? s.run(() => s.deps.files.resolveForKey(id, s.deps.key)) : null)))
  const j = owned.findIndex((f) => f !== null)
  if (j < 0) return
  throw badRequest(
    `${where}[${j}]: file ${clip(ids[j] as string)} is stored on this gateway, and files stored on this gateway are not copied into the upstream's code interpreter containers; ` +
      'give its content in the input instead (an input_file part with this file_id, which the gateway inlines)',
  )
}

/** `tools` with their file ids dealt with; `at` is where the list is in the request (`tools`, `input[i].tools`). */
export async function resolveToolFiles(tools: unknown[], at: string, s: Scope, seen: { n: number }): Promise<unknown[]> {
  return Promise.all(
    tools.map(async (t, j) => {
      if (!toolNeedsWork(t)) return t
      if (hasMaskFile(t)) return inlineMask(t, `${at}[${j}]`, s)
      await checkContainerFiles(containerFileIds(t)!, `${at}[${j}]`, s, seen)
      return t
    }),
  )
}
