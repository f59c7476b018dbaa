// A GPT model's answer to a messages request whose strict schemas were fitted to OpenAI's strict
// mode (strict-fit.ts: an optional property sent as required and nullable), with the nulls that
// added taken out (strict-nulls.ts), so the client gets what its own schema describes: a strict
// tool's arguments, and a structured output's text.
import type { GenerationRequest, GenerationResponse, StreamEvent } from '../../ir/types.ts'
import { addedNullsOf, type AddedNulls } from '../../routing/strict-fit.ts'
import { withoutAddedNulls } from '../../routing/strict-nulls.ts'

/** Where the request's fitted schemas added nulls: each strict tool's by its name, the output format's. */
export interface FittedAnswers {
  tools: Map<string, AddedNulls>
  format?: AddedNulls
}

/** What of `req`'s schemas was fitted with nulls added; undefined where nothing was. */
export function fittedAnswers(req: GenerationRequest): FittedAnswers | undefined {
  const tools = new Map<string, AddedNulls>()
  for (const t of req.tools ?? []) {
    const added = t.strict === true ? addedNullsOf(t.parameters) : undefined
    if (added) tools.set(t.name, added)
  }
  const rf = req.responseFormat
  const format = rf?.type === 'json_schema' && rf.strict === true ? addedNullsOf(rf.schema) : undefined
  return tools.size > 0 || format ? { tools, ...(format && { format }) } : undefined
}

/** A tool's arguments without the nulls its fitted schema added (as they came for any other tool). */
export function toolArgs(f: FittedAnswers, name: string, args: string): string {
  const added = f.tools.get(name)
  return added ? withoutAddedNulls(args, added) : args
}

/** The reply with the added nulls out of its tool calls' arguments and its structured output's text. */
export function cleanReply(r: GenerationResponse, f: FittedAnswers): GenerationResponse {
  const format = f.format
  const content = r.content.map((p) => {
    if (p.type === 'tool-call') return { ...p, arguments: toolArgs(f, p.name, p.arguments) }
    if (p.type === 'text' && format) return { ...p, text: withoutAddedNulls(p.text, format) }
    return p
  })
  return { ...r, content }
}

/**
 * A stream's events with a structured output's text held until its run ends and sent then as one
 * delta, the added nulls out: they can only be found in the whole JSON text, and a client reading
 * the deltas as they come would be shown the nulls. The text of a stream the upstream's failure
 * cut goes out as it came (it is no whole JSON). Tool arguments are held by the stream encoder
 * already (stream.ts) and cleaned there. `push` is the encoder's.
 */
export function holdingFormatText(format: AddedNulls, push: (ev: StreamEvent) => string): (ev: StreamEvent) => string {
  let held = ''
  return (ev) => {
    if (ev.type === 'text-delta') {
      held += ev.text
      return ''
    }
    // usage says nothing of the text, and may come while it runs
    if (held === '' || ev.type === 'usage') return push(ev)
    const text = ev.type === 'error' || (ev.type === 'text-end' && ev.cut) ? held : withoutAddedNulls(held, format)
    held = ''
    return push({ type: 'text-delta', text }) + push(ev)
  }
}
