// A collector for tests: accepts OTLP/HTTP trace exports on /v1/traces in both encodings and
// keeps the spans in one plain shape. The protobuf is decoded here by hand from the protocol's
// field numbers (opentelemetry-proto's trace.proto and common.proto), not by the exporter's own
// code, so a test checks the wire and not the library against itself.

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  traceState: string
  name: string
  /** 1 internal, 2 server, 3 client. */
  kind: number
  startNs: bigint
  endNs: bigint
  attributes: Record<string, unknown>
  status: { code: number; message: string }
  resource: Record<string, unknown>
  scope: string
}

export interface OtlpReceiver {
  url: string
  spans: ReceivedSpan[]
  /** Each export: its content type and the headers it came with. */
  exports: { contentType: string; headers: Headers }[]
  waitFor(pred: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>
  stop(): Promise<void>
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const

// ---- protobuf, minimally: varints, fixed 32/64, length-delimited ----

type Field = { no: number; wire: number; varint?: bigint; bytes?: Uint8Array; fixed?: DataView }

function* fields(buf: Uint8Array): Generator<Field> {
  let i = 0
  const varint = (): bigint => {
    let v = 0n
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[i++]!
      v |= BigInt(b & 0x7f) << shift
      if (b < 0x80) return v
    }
  }
  while (i < buf.length) {
    const key = Number(varint())
    const no = key >>> 3
    const wire = key & 7
    if (wire === 0) yield { no, wire, varint: varint() }
    else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4
      yield { no, wire, fixed: new DataView(buf.buffer, buf.byteOffset + i, n) }
      i += n
    } else if (wire === 2) {
      const n = Number(varint())
      yield { no, wire, bytes: buf.subarray(i, i + n) }
      i += n
    } else throw new Error(`protobuf wire type ${wire} not expected in a trace export`)
  }
}

const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b ?? new Uint8Array())
const hex = (b: Uint8Array | undefined) => Buffer.from(b ?? new Uint8Array()).toString('hex')

function anyValue(buf: Uint8Array): unknown {
  for (const f of fields(buf)) {
    switch (f.no) {
      case 1:
        return text(f.bytes)
      case 2:
        return f.varint !== 0n
      case 3:
        return Number(BigInt.asIntN(64, f.varint!))
      case 4:
        return f.fixed!.getFloat64(0, true)
      case 5:
        return [...fields(f.bytes!)].filter((v) => v.no === 1).map((v) => anyValue(v.bytes!))
    }
  }
  return undefined
}

function keyValues(list: Uint8Array[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const kv of list) {
    let key = ''
    let value: unknown
    for (const f of fields(kv)) {
      if (f.no === 1) key = text(f.bytes)
      if (f.no === 2) value = anyValue(f.bytes!)
    }
    out[key] = value
  }
  return out
}

function decodeSpan(buf: Uint8Array, resource: Record<string, unknown>, scope: string): ReceivedSpan {
  const s: ReceivedSpan = { traceId: '', spanId: '', parentSpanId: '', traceState: '', name: '', kind: 0, startNs: 0n, endNs: 0n, attributes: {}, status: { code: 0, message: '' }, resource, scope }
  const attrs: Uint8Array[] = []
  for (const f of fields(buf)) {
    if (f.no === 1) s.traceId = hex(f.bytes)
    else if (f.no === 2) s.spanId = hex(f.bytes)
    else if (f.no === 3) s.traceState = text(f.bytes)
    else if (f.no === 4) s.parentSpanId = hex(f.bytes)
    else if (f.no === 5) s.name = text(f.bytes)
    else if (f.no === 6) s.kind = Number(f.varint)
    else if (f.no === 7) s.startNs = f.fixed!.getBigUint64(0, true)
    else if (f.no === 8) s.endNs = f.fixed!.getBigUint64(0, true)
    else if (f.no === 9) attrs.push(f.bytes!)
    else if (f.no === 15) for (const g of fields(f.bytes!)) g.no === 2 ? (s.status.message = text(g.bytes)) : g.no === 3 && (s.status.code = Number(g.varint))
  }
  s.attributes = keyValues(attrs)
  return s
}

export function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const rs of fields(body)) {
    if (rs.no !== 1) continue
    const parts = [...fields(rs.bytes!)]
    const resourceAttrs = parts.filter((p) => p.no === 1).flatMap((p) => [...fields(p.bytes!)].filter((f) => f.no === 1).map((f) => f.bytes!))
    const resource = keyValues(resourceAttrs)
    for (const ss of parts.filter((p) => p.no === 2)) {
      const inner = [...fields(ss.bytes!)]
      const scopeField = inner.find((f) => f.no === 1)
      const scope = scopeField ? text([...fields(scopeField.bytes!)].find((f) => f.no === 1)?.bytes) : ''
      for (const sp of inner.filter((f) => f.no === 2)) out.push(decodeSpan(sp.bytes!, resource, scope))
    }
  }
  return out
}

// ---- OTLP/JSON ----

type JsonAny = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: { values?: JsonAny[] } }
type JsonKv = { key: string; value: JsonAny }

function jsonValue(v: JsonAny): unknown {
  if (v.stringValue !== undefined) return v.stringValue
  if (v.boolValue !== undefined) return v.boolValue
  if (v.intValue !== undefined) return Number(v.intValue)
  if (v.doubleValue !== undefined) return v.doubleValue
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue)
  return undefined
}

const jsonAttrs = (list: JsonKv[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]))

export function decodeJson(body: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const rs of body.resourceSpans ?? []) {
    const resource = jsonAttrs(rs.resource?.attributes)
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          traceState: s.traceState ?? '',
          name: s.name,
          kind: Number(s.kind),
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: jsonAttrs(s.attributes),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' },
          resource,
          scope: ss.scope?.name ?? '',
        })
      }
    }
  }
  return out
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const exports: OtlpReceiver['exports'] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      if (new URL(req.url).pathname !== '/v1/traces' || req.method !== 'POST') return new Response('not found', { status: 404 })
      const contentType = req.headers.get('content-type') ?? ''
      exports.push({ contentType, headers: req.headers })
      const body = new Uint8Array(await req.arrayBuffer())
      if (contentType.includes('json')) {
        spans.push(...decodeJson(JSON.parse(new TextDecoder().decode(body))))
        return Response.json({})
      }
      spans.push(...decodeProtobuf(body))
      return new Response(new Uint8Array(), { headers: { 'content-type': 'application/x-protobuf' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    exports,
    async waitFor(pred, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs
      while (!pred(spans)) {
        if (Date.now() > until) throw new Error(`spans did not arrive in ${timeoutMs} ms; got ${spans.map((s) => s.name).join(', ') || 'none'}`)
        await Bun.sleep(20)
      }
      return spans
    },
    stop: () => server.stop(true),
  }
}
