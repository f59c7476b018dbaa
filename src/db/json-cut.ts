// A JSON array's text cut into pieces of whole items, each piece a JSON array of its own of
// about `pieceChars` characters or more (an item is never split): parsed one after another and
// joined, they are the array. Only the array's own commas cut it (none inside a string or a
// nested value). Text that is not an array of at least two pieces comes back whole.

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_ARRAY = 0x5b
const OPEN_OBJECT = 0x7b
const CLOSE_ARRAY = 0x5d
const CLOSE_OBJECT = 0x7d

export function cutJsonArray(text: string, pieceChars: number): string[] {
  const first = text.indexOf('[')
  const last = text.lastIndexOf(']')
  if (first < 0 || last <= first || text.length < 2 * pieceChars) return [text]
  const pieces: string[] = []
  let depth = 0
  let from = first + 1
  for (let at = first; at <= last; at++) {
    const c = text.charCodeAt(at)
    if (c === QUOTE) {
      // to the string's closing quote (a backslash escapes the next character)
      for (at++; at < last; at++) {
        const d = text.charCodeAt(at)
        if (d === BACKSLASH) at++
        else if (d === QUOTE) break
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
    else if (c === COMMA && depth === 1 && at - from >= pieceChars) {
      pieces.push(`[${text.slice(from, at)}]`)
      from = at + 1
    }
  }
  if (pieces.length === 0) return [text]
  pieces.push(`[${text.slice(from, last)}]`)
  return pieces
}
