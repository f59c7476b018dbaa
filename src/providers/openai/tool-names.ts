// Tool names an OpenAI model takes. A function name there is at most 64 characters, where Claude
// takes 128: Claude Code names an MCP server's tools `mcp__{server}__{tool}`, often past 64, and
// OpenAI refuses the whole request. A longer name goes upstream as its first 55 characters, `_`
// and 8 hex digits of its hash (one name, one short name, the same on every turn of a
// conversation), and the model's calls come back under the name the client gave. A call id past
// OpenAI's 40 characters (another agent's, a gateway's) is shortened the same way in the history.
import type { GenerationRequest, GenerationResponse, Message, StreamEvent } from '../../ir/types.ts'
import { shortName } from '../../lib/short-name.ts'

export const OPENAI_NAME_MAX = 64
/** A call id in the history: OpenAI refuses one past 40 characters (`messages[i].tool_calls[j].id`). */
export const OPENAI_CALL_ID_MAX = 40

const hash = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex')
/** A long name's short form; `round` moves it past one another name of the request holds already. */
const short = (name: string, round = 0): string => shortName(name, OPENAI_NAME_MAX, round === 0 ? name : `${name}\u0000${round}`)
/** A call and its result name one id: the same short id for both (none comes back: the model's new calls have OpenAI's own). */
const shortId = (id: string): string => (id.length > OPENAI_CALL_ID_MAX ? `call_${hash(id).slice(0, 32)}` : id)

/** The request with every name past the limit shortened, and the way back (short → the client's); `back` is undefined when none was. */
export function shortToolNames(req: GenerationRequest): { req: GenerationRequest; back?: Map<string, string> } {
  const long = new Set<string>()
  let longIds = false
  for (const t of req.tools ?? []) if (t.name.length > OPENAI_NAME_MAX) long.add(t.name)
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'tool-call' && p.name.length > OPENAI_NAME_MAX) long.add(p.name)
      if ((p.type === 'tool-call' ? p.id : p.type === 'tool-result' ? p.toolCallId : '').length > OPENAI_CALL_ID_MAX) longIds = true
    }
  }
  if (req.toolChoice?.type === 'tool' && req.toolChoice.name.length > OPENAI_NAME_MAX) long.add(req.toolChoice.name)
  if (long.size === 0 && !longIds) return { req }
  // every name the request holds, so that no short one is also a name the client gave
  const names = new Set<string>([...(req.tools ?? []).map((t) => t.name), ...req.messages.flatMap((m) => m.content.flatMap((p) => (p.type === 'tool-call' ? [p.name] : [])))])
  const to = new Map<string, string>()
  for (const n of long) {
    let s = short(n)
    for (let round = 1; names.has(s); round++) s = short(n, round)
    names.add(s)
    to.set(n, s)
  }
  const rename = (n: string) => to.get(n) ?? n
  const renamed = (p: Message['content'][number]) =>
    (p.type === 'tool-call' && (to.has(p.name) || p.id.length > OPENAI_CALL_ID_MAX)) || (p.type === 'tool-result' && p.toolCallId.length > OPENAI_CALL_ID_MAX)
  const messages = req.messages.map((m): Message => {
    if (!m.content.some(renamed)) return m
    return {
      ...m,
      content: m.content.map((p) => {
        if (p.type === 'tool-call') return { ...p, id: shortId(p.id), name: rename(p.name) }
        if (p.type === 'tool-result') return { ...p, toolCallId: shortId(p.toolCallId) }
        return p
      }),
    }
  })
  const out: GenerationRequest = { ...req, messages }
  if (req.tools) out.tools = req.tools.map((t) => (to.has(t.name) ? { ...t, name: rename(t.name) } : t))
  if (req.toolChoice?.type === 'tool') out.toolChoice = { ...req.toolChoice, name: rename(req.toolChoice.name) }
  return { req: out, back: to.size > 0 ? new Map([...to].map(([n, s]) => [s, n])) : undefined }
}

/** A reply's calls under the client's names. */
export function longNamesIn(res: GenerationResponse, back: Map<string, string>): GenerationResponse {
  return { ...res, content: res.content.map((p) => (p.type === 'tool-call' && back.has(p.name) ? { ...p, name: back.get(p.name)! } : p)) }
}

/** A stream's calls under the client's names. */
export async function* longNamesOf(events: AsyncIterable<StreamEvent>, back: Map<string, string>): AsyncIterable<StreamEvent> {
  for await (const e of events) yield e.type === 'tool-input-start' && back.has(e.name) ? { ...e, name: back.get(e.name)! } : e
}
