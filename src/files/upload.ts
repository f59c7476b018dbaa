// Receiving an upload: multipart streamed to the blob store as it arrives (counted, and
// refused with 413 the moment it crosses the limit), or a JSON body with the content
// inline. Either way the record is written only after every byte is stored.
import { getMultipartBoundary } from '@remix-run/multipart-parser'
import { HttpError, badRequest } from '../http/errors.ts'
import { decodedBody, readJsonBody } from '../http/body.ts'
import { timedBody } from '../http/body-deadline.ts'
import type { StoredBlob } from './blob-store.ts'
import { jsonUpload } from './json-upload.ts'
import { MultipartParseError, readMultipart, type PartHead } from './multipart-stream.ts'
import { NoRoomForFile, type FilesService } from './service.ts'
import type { Family, FileRecord } from './types.ts'
import { MULTIPART_FIELDS, multipartMeta, type UploadMeta } from './upload-params.ts'

export interface UploadLimits {
  /** Largest file stored, in bytes. */
  maxUploadBytes: number
  /** Largest JSON upload body; JSON is parsed in memory, so it has the JSON body limit. */
  maxJsonBytes: number
  /** The bytes of live files one key may keep; null: no limit. */
  keyFileBytes: number | null
}

/** Room for the multipart boundaries, part headers and small fields around the file. */
const FRAMING_BYTES = 64 * 1024
const MAX_FIELD_BYTES = 1024
const LIMITS = { maxHeaderSize: 8 * 1024, maxParts: 16 }

const tooLarge = (limit: number) => new HttpError(413, `File exceeds the upload limit of ${limit} bytes`)

/** The owner's quota, its files' bytes and what it has left when the upload began. */
interface Room {
  quota: number
  used: number
  left: number
}

const noRoom = (r: Room) =>
  new HttpError(413, `File exceeds the room left for this key's files: ${r.used} of ${r.quota} bytes are kept (limits.key_file_bytes); delete files it no longer needs, then upload again`)

async function roomOf(files: FilesService, owner: string, limits: UploadLimits): Promise<Room | undefined> {
  if (limits.keyFileBytes === null) return undefined
  const used = await files.usedBytes(owner)
  return { quota: limits.keyFileBytes, used, left: Math.max(0, limits.keyFileBytes - used) }
}

/**
 * Writes the record, only if the owner's files still fit its quota with it, in one step with the
 * check: uploads of one key at once each fit alone, and together may not (the first stored is
 * kept, the others refused; never both kept, even across a kill). A refused upload's bytes go.
 */
async function committed(files: FilesService, owner: string, family: Family, createdAt: number, blob: StoredBlob, meta: UploadMeta, room: Room | undefined): Promise<FileRecord> {
  try {
    return await files.commit(owner, family, createdAt, blob, meta, room?.quota)
  } catch (e) {
    if (room && e instanceof NoRoomForFile) throw noRoom({ ...room, used: e.used })
    throw e
  }
}

async function* capped(source: AsyncIterable<Uint8Array>, limit: number, error: () => Error) {
  let n = 0
  for await (const chunk of source) {
    n += chunk.byteLength
    if (n > limit) throw error()
    yield chunk
  }
}

async function fieldText(name: string, body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = []
  for await (const c of capped(body, MAX_FIELD_BYTES, () => badRequest(`${name}: longer than ${MAX_FIELD_BYTES} bytes`))) chunks.push(c)
  return Buffer.concat(chunks).toString('utf8').trim()
}

async function receiveMultipart(
  request: Request,
  contentType: string,
  files: FilesService,
  family: Family,
  owner: string,
  limits: UploadLimits,
): Promise<FileRecord> {
  const boundary = getMultipartBoundary(contentType)
  if (!boundary) throw badRequest('Content-Type: multipart/form-data needs a boundary parameter')
  const declared = Number(request.headers.get('content-length') ?? NaN)
  if (declared > limits.maxUploadBytes + FRAMING_BYTES) throw tooLarge(limits.maxUploadBytes)
  const room = await roomOf(files, owner, limits)
  if (room && declared > room.left + FRAMING_BYTES) throw noRoom(room)
  // the file's bytes are cut at whichever limit comes first
  const cap = room && room.left < limits.maxUploadBytes ? room.left : limits.maxUploadBytes
  const over = room && room.left < limits.maxUploadBytes ? () => noRoom(room) : () => tooLarge(limits.maxUploadBytes)
  // a compressed upload is read as it decompresses, within the same limits
  const { body: raw, encoding } = decodedBody(request)
  if (!raw) throw badRequest('file: required (a multipart part named "file")')
  // one that trickles in is cut (408), not held open for ever
  const { body, done } = timedBody(raw)
  const createdAt = files.now()
  const fields: Record<string, string> = {}
  let head: PartHead | undefined
  let blob: StoredBlob | undefined
  try {
    for await (const part of readMultipart(body, boundary, LIMITS)) {
      const name = part.name
      if (name === 'file') {
        if (head) throw badRequest('file: give exactly one part named "file"')
        head = part
        blob = await files.store(capped(part.body, cap, over))
      } else if (name !== undefined && MULTIPART_FIELDS.has(name)) {
        if (name in fields) throw badRequest(`${name}: given more than once`)
        fields[name] = await fieldText(name, part.body)
      } else {
        throw badRequest(name ? `Unknown form field: ${name}` : 'A multipart part has no name')
      }
    }
    if (!head || !blob) throw badRequest('file: required (a multipart part named "file")')
    // the fields are checked before the bytes are handed over (a bad one leaves them ours to drop)
    const meta = multipartMeta(fields, head, createdAt)
    const stored = blob
    blob = undefined // the record owns it now (removed with it), or commit has removed it
    return await committed(files, owner, family, createdAt, stored, meta, room)
  } catch (e) {
    if (blob) await files.discard(blob)
    if (e instanceof MultipartParseError) throw badRequest(`Malformed multipart body: ${e.message}`)
    // DecompressionStream fails with a TypeError: with a compressed body, one is taken to be that
    if (encoding && e instanceof TypeError) throw badRequest(`Content-Encoding: ${encoding}: the body could not be decompressed (${e.message})`)
    throw e
  } finally {
    done()
  }
}

async function receiveJson(request: Request, files: FilesService, family: Family, owner: string, limits: UploadLimits) {
  const createdAt = files.now()
  const { meta, bytes } = jsonUpload(await readJsonBody(request, limits.maxJsonBytes), createdAt)
  if (bytes.byteLength > limits.maxUploadBytes) throw tooLarge(limits.maxUploadBytes)
  const room = await roomOf(files, owner, limits)
  if (room && bytes.byteLength > room.left) throw noRoom(room)
  const blob = await files.store([bytes])
  return committed(files, owner, family, createdAt, blob, meta, room)
}

/**
 * Storage errors that mean "no room", not "our bug": the client may retry later. The
 * blob's disk and the database's may fill up separately (SQLITE_FULL: the record's insert).
 */
const NO_ROOM = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'SQLITE_FULL'])
/** The data dir may not be written at all (mounted read-only, its mode or owner changed): the operator's to mend. */
const NOT_WRITABLE = new Set(['EROFS', 'EACCES', 'EPERM', 'SQLITE_READONLY'])

function storageFailure(e: unknown): unknown {
  const code = (e as { code?: unknown })?.code
  if (typeof code === 'string' && NO_ROOM.has(code)) return new HttpError(507, 'Insufficient storage: the gateway has no room for this file; nothing was kept')
  if (typeof code === 'string' && NOT_WRITABLE.has(code)) return new HttpError(503, `Service unavailable: the gateway's data dir cannot be written (${code}); nothing was kept`, { 'retry-after': '5' })
  return e
}

export async function receiveUpload(
  request: Request,
  files: FilesService,
  family: Family,
  owner: string,
  limits: UploadLimits,
): Promise<FileRecord> {
  const contentType = request.headers.get('content-type') ?? ''
  const media = contentType.split(';')[0].trim().toLowerCase()
  try {
    if (media === 'multipart/form-data') return await receiveMultipart(request, contentType, files, family, owner, limits)
    if (media === 'application/json') return await receiveJson(request, files, family, owner, limits)
  } catch (e) {
    // the blob store already removed what it had written
    throw storageFailure(e)
  }
  throw new HttpError(415, 'Content-Type: must be multipart/form-data (part "file") or application/json ({content, filename})')
}
