import { describe, expect, test } from 'bun:test'
import { MultipartParseError, readMultipart } from '../../src/files/multipart-stream.ts'

const LIMITS = { maxHeaderSize: 8192, maxParts: 16 }
const B = 'XyZzy-boundary-42'

function message(parts: { headers: string[]; body: string | Uint8Array }[], boundary = B, preamble = ''): Uint8Array {
  const chunks: Buffer[] = [Buffer.from(preamble)]
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${p.headers.map((h) => h + '\r\n').join('')}\r\n`))
    chunks.push(Buffer.from(p.body))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

/** A stream that hands out `data` in the given chunk sizes (cycled). */
function streamOf(data: Uint8Array, sizes: number[] = [data.length]): ReadableStream<Uint8Array> {
  let off = 0
  let i = 0
  return new ReadableStream({
    pull(c) {
      if (off >= data.length) return c.close()
      const n = Math.max(1, sizes[i++ % sizes.length])
      c.enqueue(data.slice(off, off + n))
      off += n
    },
  })
}

async function collect(stream: ReadableStream<Uint8Array>, boundary = B) {
  const out: { name?: string; filename?: string; contentType?: string; body: string }[] = []
  for await (const p of readMultipart(stream, boundary, LIMITS)) {
    const chunks: Uint8Array[] = []
    for await (const c of p.body) chunks.push(c)
    out.push({ name: p.name, filename: p.filename, contentType: p.contentType, body: Buffer.concat(chunks).toString('latin1') })
  }
  return out
}

const SDK_LIKE = message([
  { headers: ['Content-Disposition: form-data; name="file"; filename="x.jsonl"'], body: '{"a":1}\n{"b":2}\n' },
  { headers: ['Content-Disposition: form-data; name="purpose"'], body: 'batch' },
])

describe('readMultipart', () => {
  test('a file part with no Content-Type and a field, as the openai SDK sends them', async () => {
    expect(await collect(streamOf(SDK_LIKE))).toEqual([
      { name: 'file', filename: 'x.jsonl', contentType: undefined, body: '{"a":1}\n{"b":2}\n' },
      { name: 'purpose', filename: undefined, contentType: undefined, body: 'batch' },
    ])
  })

  test('same result for every split point of the stream (boundaries straddling chunks)', async () => {
    const expected = await collect(streamOf(SDK_LIKE))
    for (let size = 1; size <= 40; size++) {
      expect(await collect(streamOf(SDK_LIKE, [size]))).toEqual(expected)
    }
    for (let cut = 1; cut < SDK_LIKE.length; cut++) {
      expect(await collect(streamOf(SDK_LIKE, [cut, SDK_LIKE.length]))).toEqual(expected)
    }
  })

  test('binary content containing CR LF and partial boundaries survives intact', async () => {
    const tricky = Buffer.concat([Buffer.from(`\r\n--${B.slice(0, 10)}\r\n-`), Buffer.from([0, 255, 13, 10, 45, 45]), Buffer.from(`\r\n--${B}x`.slice(0, -2))])
    const msg = message([{ headers: ['Content-Disposition: form-data; name="file"; filename="b.bin"', 'Content-Type: application/x-thing'], body: tricky }])
    for (const size of [1, 2, 3, 7, 64]) {
      const [p] = await collect(streamOf(msg, [size]))
      expect(Buffer.from(p.body, 'latin1').equals(tricky)).toBe(true)
      expect(p.contentType).toBe('application/x-thing')
    }
  })

  test('RFC 5987 filename* and a quoted filename with a semicolon are decoded by the library', async () => {
    const msg = message([
      { headers: [`Content-Disposition: form-data; name="file"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt`], body: 'x' },
      { headers: ['Content-Disposition: form-data; name="file2"; filename="a;b.txt"'], body: 'y' },
    ])
    const parts = await collect(streamOf(msg))
    expect(parts.map((p) => p.filename)).toEqual(['résumé.txt', 'a;b.txt'])
  })

  test('a preamble before the first boundary is ignored; an empty part body is empty', async () => {
    const msg = message([{ headers: ['Content-Disposition: form-data; name="purpose"'], body: '' }], B, 'ignore me\r\n')
    expect(await collect(streamOf(msg, [3]))).toEqual([{ name: 'purpose', filename: undefined, contentType: undefined, body: '' }])
  })

  test('a part with no headers at all has no name', async () => {
    const msg = message([{ headers: [], body: 'abc' }])
    expect(await collect(streamOf(msg))).toEqual([{ name: undefined, filename: undefined, contentType: undefined, body: 'abc' }])
  })

  test('part bodies stream: the first bytes arrive before the rest of the upload is sent', async () => {
    let sent = 0
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const head = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="big"\r\n\r\n`)
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 0) c.enqueue(Buffer.concat([head, Buffer.alloc(1 << 20, 97)]))
        else if (sent === 1) {
          await gate
          c.enqueue(Buffer.from(`\r\n--${B}--`))
        } else c.close()
        sent++
      },
    })
    for await (const p of readMultipart(stream, B, LIMITS)) {
      const it = p.body[Symbol.asyncIterator]()
      const first = await it.next()
      // the end of the part has not been sent yet, and still most of the first MiB is here
      expect(sent).toBeLessThanOrEqual(2)
      expect(first.value!.length).toBeGreaterThan((1 << 20) - 100)
      release()
      let rest = 0
      for (let r = await it.next(); !r.done; r = await it.next()) rest += r.value.length
      expect(first.value!.length + rest).toBe(1 << 20)
    }
  })

  test('a consumer that stops reading a part early still gets the next part', async () => {
    const msg = message([
      { headers: ['Content-Disposition: form-data; name="file"; filename="a"'], body: 'A'.repeat(5000) },
      { headers: ['Content-Disposition: form-data; name="purpose"'], body: 'batch' },
    ])
    const names: string[] = []
    let last = ''
    for await (const p of readMultipart(streamOf(msg, [100]), B, LIMITS)) {
      names.push(p.name!)
      for await (const c of p.body) {
        last = Buffer.from(c).toString()
        break
      }
    }
    expect(names).toEqual(['file', 'purpose'])
    expect(last).toBe('batch')
  })

  const bad: [string, Uint8Array | string, RegExp][] = [
    ['no boundary at all', 'just some text', /no boundary/],
    ['truncated inside a part', `--${B}\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc`, /ended inside a part/],
    ['truncated inside headers', `--${B}\r\nContent-Disposition: form-da`, /inside part headers/],
    ['no closing boundary after a part', `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${B}`, /after a boundary/],
    ['headers too large', `--${B}\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\nx\r\n--${B}--`, /headers exceed 8192/],
  ]
  for (const [what, body, message] of bad) {
    test(`malformed: ${what}`, async () => {
      const err = await collect(streamOf(typeof body === 'string' ? Buffer.from(body) : body, [7])).catch((e) => e)
      expect(err).toBeInstanceOf(MultipartParseError)
      expect(err.message).toMatch(message)
    })
  }

  test('more parts than allowed', async () => {
    const msg = message(Array.from({ length: 17 }, () => ({ headers: ['Content-Disposition: form-data; name="x"'], body: '1' })))
    const err = await collect(streamOf(msg)).catch((e) => e)
    expect(err.message).toMatch(/more than 16 parts/)
  })
})
