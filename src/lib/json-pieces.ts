// A JSON response holding long arrays, written a slice of an array at a time with a turn of the
// event loop between slices: encoding a 10,000-item listing in one piece holds the request thread
// for as long as that takes. The bytes are those JSON.stringify would give.
import { nextTurn } from './turn.ts'

/** `before` then the JSON of `list`, `slice` items a piece. */
export function* arrayPieces(before: string, list: readonly unknown[], slice: number): Generator<string> {
  if (list.length === 0) return yield `${before}[]`
  for (let i = 0; i < list.length; i += slice) {
    const json = JSON.stringify(list.slice(i, i + slice))
    yield `${i === 0 ? before + '[' : ','}${json.slice(1, -1)}${i + slice >= list.length ? ']' : ''}`
  }
}

/** The JSON of `value`, the array under `key` cut into slices of `slice` items. */
function* pieces(value: Record<string, unknown>, key: string, slice: number): Generator<string> {
  let head = '{'
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    const name = `${head}${JSON.stringify(k)}:`
    head = ','
    if (k !== key || !Array.isArray(v) || v.length <= slice) yield name + JSON.stringify(v)
    else yield* arrayPieces(name, v, slice)
  }
  yield head === '{' ? '{}' : '}'
}

/** A JSON response written a piece of `it` a pull, a turn of the loop before each but the first. */
export function piecesResponse(it: Iterator<string>): Response {
  const encoder = new TextEncoder()
  let first = true
  const body = new ReadableStream<Uint8Array>({
    async pull(out) {
      if (!first) await nextTurn()
      first = false
      const next = it.next()
      if (next.done) return out.close()
      out.enqueue(encoder.encode(next.value))
    },
  })
  return new Response(body, { headers: { 'content-type': 'application/json;charset=utf-8' } })
}

/** `value` as a JSON response, its array under `key` written `slice` items a turn of the event loop. */
export function jsonWithLongArray(value: Record<string, unknown>, key: string, slice = 500): Response {
  // a short one is written whole, with its length, as any other reply
  const list = value[key]
  if (!Array.isArray(list) || list.length <= slice) return Response.json(value)
  return piecesResponse(pieces(value, key, slice))
}
