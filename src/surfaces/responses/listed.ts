// An item as OpenAI's listings show it (a response's input items, a conversation's items). An
// item a client sent comes in its short input form: a message's text as a string, an assistant's
// output text without annotations, a call or a tool's output without a status. The listing gives
// the whole form OpenAI's own does and its schema requires (typed clients decode by it): text as
// parts, each output text with its annotations and logprobs, and a status on every item type
// that has one. The items are stored as they came, and filled in only as shown.
import { isObj } from '../../lib/json.ts'

type Obj = Record<string, unknown>

/** Each item type's id prefix, as OpenAI's items have them; another type's is `item`. */
const PREFIX: Partial<Record<string, string>> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  custom_tool_call: 'ctc',
  custom_tool_call_output: 'ctco',
  reasoning: 'rs',
  computer_call: 'cu',
  computer_call_output: 'cuo',
}
export const idPrefixOf = (type: unknown): string => (typeof type === 'string' ? PREFIX[type] : undefined) ?? 'item'

/** The item types whose listed form carries a status (OpenAI's item resources). */
const WITH_STATUS: ReadonlySet<string> = new Set([
  'message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output',
  'computer_call', 'computer_call_output', 'web_search_call', 'file_search_call', 'image_generation_call',
  'code_interpreter_call', 'local_shell_call', 'shell_call', 'shell_call_output', 'apply_patch_call',
  'apply_patch_call_output', 'tool_search_call', 'tool_search_output', 'program_output',
])

const wholeText = (p: unknown): unknown =>
  isObj(p) && p.type === 'output_text' && (p.annotations === undefined || p.logprobs === undefined) ? { ...p, annotations: p.annotations ?? [], logprobs: p.logprobs ?? [] } : p

/** `it` in its listed form (a new object where anything is filled in; `it` itself otherwise). */
export function asListed(it: Obj): Obj {
  const type = typeof it.type === 'string' ? it.type : 'message'
  let out = it
  const set = (k: string, v: unknown) => {
    if (out === it) out = { ...it }
    out[k] = v
  }
  if (it.type !== type) set('type', type)
  if (type === 'message') {
    const parts = typeof it.content === 'string' ? [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }] : it.content
    if (Array.isArray(parts)) {
      const whole = parts.map(wholeText)
      if (parts !== it.content || whole.some((p, k) => p !== parts[k])) set('content', whole)
    }
  }
  if (WITH_STATUS.has(type) && it.status === undefined) set('status', 'completed')
  return out
}
