// Tool names an OpenAI model takes. A function name there is at most 64 characters of a-z, A-Z,
// 0-9, `_` and `-`, where Claude takes 128: Claude Code names an MCP server's tools
// `mcp__{server}__{tool}`, often past 64, and a messages client's history may hold a call under a
// name of other characters (`search.docs`); OpenAI refuses the whole request for either. Such a
// name goes upstream as its first 55 characters (each other character as `_`), `_` and 8 hex
// digits of its hash (one name, one upstream name, the same on every turn of a conversation), and
// the model's calls come back under the name the client gave. A call id past OpenAI's 40
// characters (another agent's, a gateway's) is shortened the same way in the history.
import type { GenerationRequest, GenerationResponse, Message, StreamEvent } from '../../ir/types.ts'

export const OPENAI_NAME_MAX = 64
/** A character OpenAI takes in a function name. */
const NAME_CHAR = 'a-zA-Z0-9_-'
const OPENAI_NAME = new RegExp(`^[${NAME_CHAR}]{1,${OPENAI_NAME_MAX}}$`)
const OTHER_CHARS = new RegExp(`[^${NAME_CHAR}]`, 'g')
const taken = (name: string) => OPENAI_NAME.test(name)
/** A call id in the history: OpenAI refuses one past 40 characters (`messages[i].tool_calls[j].id`). */
export const OPENAI_CALL_ID_MAX = 40

const hash = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex')
/** A name's upstream form; `round` moves it past one another name of the request holds already. */
const short = (name: string, round = 0): string =>
  `${name.slice(0, OPENAI_NAME_MAX - 9).replace(OTHER_CHARS, '_')}_${hash(round === 0 ? name : `${name}\u0000${round}`).slice(0, 8)}`
/** A call and its result name one id: the same short id for both (none comes back: the model's new calls have OpenAI's own). */
const shortId = (id: string): string => (id.length > OPENAI_CALL_ID_MAX ? `call_${hash(id).slice(0, 32)}` : id)

/** The request with every name OpenAI would refuse renamed, and the way back (upstream → the client's); `back` is undefined when none was. */
export function shortToolNames(req: GenerationRequest): { req: GenerationRequest; back?: Map<string, string> } {
  const refused = new Set<string>()
  let longIds = false
  for (const t of req.tools ?? []) if (!taken(t.name)) refused.add(t.name)
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === 'tool-call' && !taken(p.name)) refused.add(p.name)
      if ((p.type === 'tool-call' ? p.id : p.type === 'tool-result' ? p.toolCallId : '').length > OPENAI_CALL_ID_MAX) longIds = true
    }
  }
  if (req.toolChoice?.type === 'tool' && !taken(req.toolChoice.name)) refused.add(req.toolChoice.name)
  if (refused.size === 0 && !longIds) return { req }
  // every name the request holds, so that no short one is also a name the client gave
  const names = new Set<string>([...(req.tools ?? []).map((t) => t.name), ...req.messages.flatMap((m) => m.content.flatMap((p) => (p.type === 'tool-call' ? [p.name] : [])))])
  const to = new Map<string, string>()
  for (const n of refused) {
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
