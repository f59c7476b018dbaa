// Compressed bodies that inflate far past the body limit (brotli and gzip of 64 MiB of zeros,
// 65 KB at most): each is a 413 once the limit is reached, and decompressing
// them up to it holds no one else's request. Bun's DecompressionStream inflates on the thread
// that reads it, without giving the event loop back, so eight of them at once held the
// gateway's loop for over a second; the gateway now inflates in a worker.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { brotliCompressSync, constants } from 'node:zlib'
import { worstGap } from '../helpers/loop-gap.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

let gw: Gateway
// twice the body limit: inflating up to the limit is the whole of the work either way
const zeros = new Uint8Array(64 << 20)
const bombs = {
  br: brotliCompressSync(zeros, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }),
  gzip: Bun.gzipSync(zeros, { level: 9 }),
}
beforeAll(async () => {
  // room for all eight bodies at once (the budget would turn some away with a 503 before they are read), and uploads of 64 MiB
  gw = await startGateway({ env: { SWITCHYARD_BODY_BUDGET_BYTES: String(1 << 30), SWITCHYARD_MAX_UPLOAD_BYTES: String(64 << 20) } })
})
afterAll(async () => {
  await gw.stop()
})

async function send(path: string, encoding: string, body: Uint8Array, type = 'application/json') {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': type, 'content-encoding': encoding },
    body: new Blob([new Uint8Array(body)]),
  })
  const text = await res.text()
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return { status: res.status, error: JSON.parse(text).error as string | undefined, text }
}

describe('compressed bombs', () => {
  test('eight at once are 413s and keep the event loop free', async () => {
    const answers: { status: number; error?: string }[] = []
    const limit = gw.services.config.limits.maxBodyBytes
    // the in-process gateway's loop is this test's: how long it went without a turn is what another request waited
    const gap = await worstGap(async () => {
      const sent = ['br', 'gzip', 'br', 'gzip', 'br', 'gzip', 'br', 'gzip'].map((enc) => send('/api/alpha/v1/chat/completions', enc, bombs[enc as 'br' | 'gzip']))
      for (const { status, error } of await Promise.all(sent)) answers.push({ status, error })
    })
    for (const a of answers) expect(a).toEqual({ status: 413, error: `Request body exceeds the limit of ${limit} bytes` })
    // before: 2.4 to 3.0 s (2 cores, load average 11 to 15); now 119 to 186 ms there
    expect(Math.round(gap)).toBeLessThan(500)
  })

  test('a bomb as an upload, JSON or multipart, is refused past its limit; small compressed bodies still read whole', async () => {
    expect((await send('/api/v1/files', 'br', bombs.br)).status).toBe(413)
    expect((await send('/api/v1/batches', 'gzip', bombs.gzip)).status).toBe(413)
    const B = 'bomb-boundary'
    const head = `--${B}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${B}\r\nContent-Disposition: form-data; name="file"; filename="z.bin"\r\n\r\n`
    const form = new Uint8Array(head.length + (100 << 20))
    form.set(new TextEncoder().encode(head))
    const upload = await send('/api/v1/files', 'br', brotliCompressSync(form, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }), `multipart/form-data; boundary=${B}`)
    expect(upload.status).toBe(413)
    const json = JSON.stringify({ model: 'mock-gpt', messages: [{ role: 'user', content: 'mock: text squeezed' }] })
    for (const [enc, body] of [['br', brotliCompressSync(json)], ['gzip', Bun.gzipSync(json)], ['zstd', Bun.zstdCompressSync(json)]] as const) {
      const r = await send('/api/alpha/v1/chat/completions', enc, body)
      expect({ enc, status: r.status }).toEqual({ enc, status: 200 })
      expect(JSON.parse(r.text).choices[0].message.content).toBe('squeezed')
    }
    // bytes that do not decompress are still a 400 naming the encoding
    const bad = await send('/api/alpha/v1/chat/completions', 'gzip', new TextEncoder().encode(json))
    expect(bad.status).toBe(400)
    expect(bad.error).toStartWith('Content-Encoding: gzip: the body could not be decompressed')
    const badUpload = await send('/api/v1/files', 'br', new TextEncoder().encode(head), `multipart/form-data; boundary=${B}`)
    expect(badUpload.status).toBe(400)
    expect(badUpload.error).toStartWith('Content-Encoding: br: the body could not be decompressed')
  })
})
