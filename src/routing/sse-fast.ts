// Cheap reads of the events a pass-through tap sees thousands of times a stream (a text
// delta), so that only the events the record needs (the first, usage, finish, errors, tool
// calls) pay for eventFields and JSON.parse. Every helper answers `undefined` when the event is
// not in the one plain shape it knows, and the tap then reads it the full way: a surprising
// event costs a parse, never a wrong record.

/**
 * The `event:` name and the data of an event written the usual way — an optional `event:`
 * line, one `data: ` line, a blank line, LF endings — or undefined for any other shape.
 */
export function plainEvent(raw: string): { event: string | null; data: string } | undefined {
  if (!raw.endsWith('\n\n')) return undefined
  let at = 0
  let event: string | null = null
  if (raw.startsWith('event: ')) {
    const nl = raw.indexOf('\n')
    event = raw.slice(7, nl)
    at = nl + 1
  }
  if (!raw.startsWith('data: ', at)) return undefined
  const end = raw.length - 2
  // one data line: no other line break (a CR too means CRLF endings: the full way)
  if (raw.indexOf('\n', at) !== end || raw.includes('\r')) return undefined
  return { event, data: raw.slice(at + 6, end) }
}

/** How many times `needle` occurs in `s`. */
export function occurrences(s: string, needle: string): number {
  let n = 0
  for (let i = s.indexOf(needle); i !== -1; i = s.indexOf(needle, i + needle.length)) n++
  return n
}

/**
 * The JSON string whose opening quote sits just before `from`, decoded, and the index past
 * its closing quote; undefined when it does not close in `s` or does not decode.
 */
export function jsonStringAt(s: string, from: number): { value: string; end: number } | undefined {
  let escaped = false
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (escaped) escaped = false
    else if (c === 92) escaped = true
    else if (c === 34) {
      const body = s.slice(from, i)
      if (!escaped && body.indexOf('\\') === -1) return { value: body, end: i + 1 }
      try {
        return { value: JSON.parse(s.slice(from - 1, i + 1)) as string, end: i + 1 }
      } catch {
        return undefined
      }
    }
  }
  return undefined
}

/**
 * The text of a string member `key` that occurs once in `data` (`"key":"…"`), '' for
 * `"key":null` or no such member; undefined when the member is there in another form
 * (twice, a number, an object) or its string does not decode.
 */
export function onlyString(data: string, key: string): string | undefined {
  const name = `"${key}":`
  const n = occurrences(data, name)
  if (n === 0) return ''
  if (n > 1) return undefined
  const i = data.indexOf(name) + name.length
  if (data.startsWith('null', i)) return ''
  if (data.charCodeAt(i) !== 34) return undefined
  return jsonStringAt(data, i + 1)?.value
}

/**
 * How many more brackets close than open in s[from, …) outside strings: 1 when `from` sits
 * among the top-level members of the object that `s` is; -1 when a string does not close.
 */
export function closesAfter(s: string, from: number): number {
  let net = 0
  let inString = false
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 125 || c === 93) net++
    else if (c === 123 || c === 91) net--
  }
  return inString ? -1 : net
}
