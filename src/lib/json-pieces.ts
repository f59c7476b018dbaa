// A JSON response holding one long array, written a slice of that array at a time with a turn
// of the event loop between slices: encoding a 10,000-item listing in one piece holds the
// request thread for as long as that takes. The bytes are those JSON.stringify would give.
import { nextTurn } from './turn.ts'

/** The JSON of `value`, the array under `key` cut into slices of `slice` items. */
function* pieces(value: Record<string, unknown>, key: string, slice: number): Generator<string> {
  let head = '{'
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    const name = `${head}${JSON.stringify(k)}:`
    head = ','
    if (k !== key || !Array.isArray(v) || v.length <= slice) {
      yield name + JSON.stringify(v)
      continue
    }
    for (let i = 0; i < v.length; i += slice) {
      const json = JSON.stringify(v.slice(i, i + slice))
      yield `${i === 0 ? name + '[' : ','}${json.slice(1, -1)}${i + slice >= v.length ? ']' : ''}`
    }
  }
  yield head === '{' ? '{}' : '}'
}

/** `value` as a JSON response, its array under `key` written `slice` items a turn of the event loop. */
export function jsonWithLongArray(value: Record<string, unknown>, key: string, slice = 500): Response {
  const encoder = new TextEncoder()
  const it = pieces(value, key, slice)
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
