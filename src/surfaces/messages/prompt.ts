// The prompt of a messages-style body as one text: system, message text, tool_use inputs,
// tool_result text and tool definitions. Used to estimate credits before the call and to
// bill a dropped pass-through stream whose upstream never said its input count.
// Tolerant of any body: it may run on one that failed validation.
import { isObj, type Obj } from '../../lib/json.ts'

function blockText(b: unknown, out: string[]): void {
  if (typeof b === 'string') {
    out.push(b)
    return
  }
  if (!isObj(b)) return
  switch (b.type) {
    case 'text':
      if (typeof b.text === 'string') out.push(b.text)
      return
    case 'thinking':
      if (typeof b.thinking === 'string') out.push(b.thinking)
      return
    case 'tool_use':
    case 'server_tool_use':
      out.push(`${typeof b.name === 'string' ? b.name : ''} ${JSON.stringify(b.input ?? {})}`)
      return
    case 'tool_result':
    case 'search_result':
      contentText(b.content, out)
      return
    case 'document':
      if (isObj(b.source) && b.source.type === 'text' && typeof b.source.data === 'string') out.push(b.source.data)
      return
  }
}

function contentText(c: unknown, out: string[]): void {
  if (Array.isArray(c)) for (const b of c) blockText(b, out)
  else blockText(c, out)
}

export function messagesPromptText(body: Record<string, unknown>): string {
  const out: string[] = []
  contentText(body.system, out)
  if (Array.isArray(body.messages)) for (const m of body.messages) if (isObj(m)) contentText(m.content, out)
  if (Array.isArray(body.tools)) for (const t of body.tools) if (isObj(t)) out.push(JSON.stringify(t))
  return out.join('\n')
}
