// The files routes: `/api/v1/files` and `/api/alpha/v1/files` speak OpenAI's file objects,
// `/api/beta/v1/files` Anthropic's file metadata. One store behind all three; every route
// acts for the calling key only, and another key's file is simply not found.
import { Elysia } from 'elysia'
import { keyOf } from '../http/context.ts'
import { badRequest, echo, notFound } from '../http/errors.ts'
import { queryTaking } from '../http/query.ts'
import { jsonWithLongArray } from '../lib/json-pieces.ts'
import type { Services } from '../services.ts'
import { anthropicListQuery, openAIListQuery } from './list-params.ts'
import type { FilesService } from './service.ts'
import {
  anthropicDeleted,
  contentDisposition,
  openAIDeleted,
  toAnthropicFile,
  toAnthropicList,
  toOpenAIFile,
  toOpenAIList,
} from './shapes.ts'
import type { Family, FileRecord } from './types.ts'
import { receiveUpload, type UploadLimits } from './upload.ts'

interface Wire {
  family: Family
  file(f: FileRecord): unknown
  list(files: FilesService, owner: string, q: URLSearchParams): unknown
  deleted(id: string): unknown
  /** The query a file's own routes (metadata, content, delete) take. */
  fileQuery: readonly string[]
}

const OPENAI: Wire = {
  family: 'openai',
  file: toOpenAIFile,
  async list(files, owner, params) {
    const q = openAIListQuery(params)
    const page = await files.list(owner, q)
    if (!page) throw badRequest(`after: no file ${echo(q.after)}`)
    // up to 10,000 files a page: written a slice a turn, not encoded at once
    return jsonWithLongArray(toOpenAIList(page), 'data')
  },
  deleted: openAIDeleted,
  // OpenAI's retrieve, content and delete take none
  fileQuery: [],
}

const ANTHROPIC: Wire = {
  family: 'anthropic',
  file: toAnthropicFile,
  async list(files, owner, params) {
    const q = anthropicListQuery(params)
    if (q.ids) return toAnthropicList({ data: await files.some(owner, q.ids), hasMore: false }, 'after')
    if (q.scoped) return toAnthropicList({ data: [], hasMore: false }, 'after')
    const page = await files.list(owner, q)
    if (!page) throw badRequest(`${q.cursorParam}: no file ${echo(q.after ?? q.before)}`)
    return toAnthropicList(page, q.before !== undefined ? 'before' : 'after')
  },
  deleted: anthropicDeleted,
  // the `beta=true` older Anthropic SDKs add to a beta resource's path
  fileQuery: ['beta'],
}

// An id is echoed cut: a 10 KB id must not make a 10 KB error.
const missing = (id: string) => notFound(`No such file: ${echo(id)}`)

function familyRoutes(root: string, wire: Wire, files: FilesService, limits: UploadLimits) {
  const checkQuery = (request: Request) => queryTaking(request, { what: "a file's own route", names: wire.fileQuery })
  const find = async (request: Request, id: string) => {
    checkQuery(request)
    return (await files.get(keyOf(request).id, id)) ?? (() => { throw missing(id) })()
  }
  return new Elysia({ name: `files:${root}` })
    .post(root, async ({ request }) => wire.file(await receiveUpload(request, files, wire.family, keyOf(request).id, limits)), {
      // the body is read here as a stream; Elysia must not read it first
      parse: 'none',
    })
    .get(root, ({ request }) => wire.list(files, keyOf(request).id, new URL(request.url).searchParams))
    .get(`${root}/:id`, async ({ request, params }) => wire.file(await find(request, params.id)))
    .get(`${root}/:id/content`, async ({ request, params }) => {
      const rec = await find(request, params.id)
      const blob = await files.open(rec)
      if (!blob) throw missing(params.id)
      if (blob.kind === 'redirect') return new Response(null, { status: 302, headers: { location: blob.url } })
      return new Response(blob.body, {
        headers: {
          'content-type': rec.mimeType,
          'content-length': String(blob.size),
          'content-disposition': contentDisposition(rec.filename),
          // served as the type its uploader named, which may be text/html: never sniffed or
          // run as a page of the gateway's origin, whatever a browser does with it
          'x-content-type-options': 'nosniff',
          'content-security-policy': 'sandbox',
        },
      })
    })
    .delete(`${root}/:id`, async ({ request, params }) => {
      checkQuery(request)
      if (!(await files.delete(keyOf(request).id, params.id))) throw missing(params.id)
      return wire.deleted(params.id)
    })
}

export function filesRoutes(s: Pick<Services, 'config' | 'files'>) {
  const limits: UploadLimits = { maxUploadBytes: s.config.limits.maxUploadBytes, maxJsonBytes: s.config.limits.maxBodyBytes, keyFileBytes: s.config.limits.keyFileBytes }
  return new Elysia({ name: 'files' })
    .use(familyRoutes('/api/v1/files', OPENAI, s.files, limits))
    .use(familyRoutes('/api/alpha/v1/files', OPENAI, s.files, limits))
    .use(familyRoutes('/api/beta/v1/files', ANTHROPIC, s.files, limits))
}
