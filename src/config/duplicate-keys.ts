// A key given twice in one mapping of the config file: the YAML parser keeps the last and says
// nothing, so a second `limits:` block (a paste) or a second `providers:` silently replaced the
// first. This reads the block-style mappings line by line (the form the README's examples
// use), a mapping per indentation and per list item; flow mappings (`{a: 1}`) and the lines
// of a block scalar (`|`, `>`) are not read as keys. It only ever finds a duplicate the parser
// would also have met, so a file it passes parses as before.

interface Mapping {
  indent: number
  keys: Map<string, number>
}

// an indent, an optional list dash, a plain or quoted key, its colon, then a space or the end
const KEY_LINE = /^( *)(- +)?(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_$][^:#{}[\],"']*?))\s*:(?:\s|$)(.*)$/

/** The first key given twice in one mapping, with both line numbers; undefined when there is none. */
export function duplicateKey(text: string): { key: string; first: number; again: number } | undefined {
  const stack: Mapping[] = []
  let scalarIndent = -1
  const lines = text.split(/\r?\n/)
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!
    const indent = line.length - line.trimStart().length
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue
    // the lines of a block scalar, more indented than its key, are text
    if (scalarIndent >= 0) {
      if (indent > scalarIndent) continue
      scalarIndent = -1
    }
    if (line.trimStart().startsWith('---')) {
      stack.length = 0
      continue
    }
    const m = KEY_LINE.exec(line)
    if (!m) continue
    const key = (m[3] ?? m[4] ?? m[5] ?? '').trim()
    const dash = m[2]?.length ?? 0
    const at = m[1]!.length + dash
    if (dash > 0) {
      // a list item begins a mapping of its own
      while (stack.length && stack.at(-1)!.indent >= at) stack.pop()
      stack.push({ indent: at, keys: new Map() })
    } else {
      while (stack.length && stack.at(-1)!.indent > at) stack.pop()
      if (!stack.length || stack.at(-1)!.indent < at) stack.push({ indent: at, keys: new Map() })
    }
    const mapping = stack.at(-1)!
    const first = mapping.keys.get(key)
    if (first !== undefined) return { key, first, again: n + 1 }
    mapping.keys.set(key, n + 1)
    if (/^[|>]/.test(m[6]!.trim())) scalarIndent = at
  }
  return undefined
}
