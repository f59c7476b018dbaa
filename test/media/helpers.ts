// A real gateway (files service, SQLite, blob store) with two keys, key 1 owning the files
// uploaded over HTTP, and a local document server whose address the policy treats as public.
import type { ApiKey } from '../../src/http/context.ts'
import type { FetchPolicy } from '../../src/media/fetch.ts'
import type { MediaDeps } from '../../src/media/source.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

export const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n')
export const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex')
export const TEXT = 'The meeting moved to Thursday at 10:00.'

export interface MediaRig {
  gw: Gateway
  key1: ApiKey
  key2: ApiKey
  docs: ReturnType<typeof Bun.serve>
  /** A URL on the document server. */
  url(path: string): string
  /** Key 1's upload: `content` is text or a data URL. */
  upload(content: string, filename: string): Promise<string>
  deps(key: ApiKey, over?: Partial<FetchPolicy>): MediaDeps
  stop(): Promise<void>
}

export async function startMediaRig(): Promise<MediaRig> {
  const gw = await startGateway()
  const docs = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const p = new URL(req.url).pathname
      if (p === '/r.pdf') return new Response(PDF, { headers: { 'content-type': 'application/pdf' } })
      // servers often say octet-stream; the bytes' signature decides
      if (p === '/download') return new Response(PDF, { headers: { 'content-type': 'application/octet-stream' } })
      if (p === '/r.txt') return new Response(TEXT, { headers: { 'content-type': 'text/plain; charset=utf-8' } })
      if (p === '/latin1.txt') return new Response(Buffer.from('caf\xe9', 'latin1'), { headers: { 'content-type': 'text/plain; charset=iso-8859-1' } })
      if (p === '/dot.png') return new Response(PNG, { headers: { 'content-type': 'image/png' } })
      if (p === '/r.zip') return new Response(new Uint8Array([0x50, 0x4b, 3, 4, 0, 0, 0xff]), { headers: { 'content-type': 'application/zip' } })
      if (p === '/to-metadata') return Response.redirect('http://169.254.169.254/latest/meta-data/', 302)
      return new Response('no', { status: 404 })
    },
  })
  const key1 = (await gw.services.keys.authenticate(gw.key))!
  const key2 = (await gw.services.keys.create({ name: 'key 2' })).record
  return {
    gw, key1, key2, docs,
    url: (path) => `http://127.0.0.1:${docs.port}${path}`,
    async upload(content, filename) {
      const res = await fetch(`${gw.url}/api/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content, filename }),
      })
      if (res.status !== 200) throw new Error(`upload ${res.status}: ${await res.text()}`)
      return ((await res.json()) as { id: string }).id
    },
    deps: (key, over = {}) => ({
      files: gw.services.files,
      key,
      policy: { allowPrivate: false, maxBytes: 1 << 20, timeoutMs: 2000, allowAddresses: new Set(['127.0.0.1']), ...over },
    }),
    async stop() {
      docs.stop(true)
      await gw.stop()
    },
  }
}

/** The 400 message a promise is rejected with (fails the test otherwise). */
export async function refusal(p: Promise<unknown>): Promise<string> {
  const e = (await p.then(
    () => {
      throw new Error('expected a 400, got a result')
    },
    (x) => x,
  )) as { status?: number; message: string }
  if (e.status !== 400) throw e
  return e.message
}
