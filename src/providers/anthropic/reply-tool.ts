// A JSON schema reply from a Claude model with no structured output of its own (the 3s, Sonnet 4,
// Opus 4): the model is made to call a tool whose input schema is the reply's, and the call's
// input comes back as the reply's text (response.ts, stream.ts), its stop as the turn's end.
// With tools of the client's own beside it, the model must call one of them or the reply's. Pure.
import type { ResponseFormat, Tool, ToolChoice } from '../../ir/types.ts'
import { badRequest } from '../checks.ts'

type Json = Record<string, unknown>

/** The reply tool's name, unless a tool of the client's has it (then `_2`, `_3`…). */
const NAME = 'json_reply'

export interface ReplyTool {
  name: string
  /** The tool as Anthropic takes it. */
  tool: Json
}

/** The tool a JSON schema reply is asked through, named apart from the client's tools (`model`: the one it goes to, for the error of a schema no tool can take). */
export function replyTool(format: Extract<ResponseFormat, { type: 'json_schema' }>, tools: Tool[] | undefined, model: string): ReplyTool {
  const taken = new Set((tools ?? []).map((t) => t.name))
  let name = NAME
  for (let n = 2; taken.has(name); n++) name = `${NAME}_${n}`
  const schema = format.schema ?? {}
  // a tool's input is an object: a reply of another type has no tool to go through
  if (schema.type !== undefined && schema.type !== 'object') {
    throw badRequest(`response_format: a JSON schema of type ${JSON.stringify(schema.type).slice(0, 40)} has no counterpart on ${model}, which has no structured output of its own (its reply goes as a tool's input, an object); give a schema of type object, or use a Claude model from Opus 4.1 or Sonnet 4.5 on`)
  }
  const said = format.description ? ` ${format.description}` : ''
  return {
    name,
    tool: {
      name,
      description: `Give your reply (${format.name}) by calling this tool once: its input is the reply, as JSON of this schema.${said}`,
      input_schema: 'type' in schema ? schema : { type: 'object', ...schema },
    },
  }
}

/** `output_config` without its format (the reply tool asks for it instead). */
export function withoutFormat(config: Json): Json {
  const { format: _, ...rest } = config
  return rest
}

/**
 * The tool choice beside a reply tool: the client's own tool where it named one, any tool where
 * it has tools and did not rule them out (its own call, or the reply), else the reply's.
 */
export function replyChoice(choice: ToolChoice | undefined, name: string, hasTools: boolean): Json {
  if (choice?.type === 'tool') return { type: 'tool', name: choice.name }
  if (hasTools && choice?.type !== 'none') return { type: 'any' }
  return { type: 'tool', name }
}
