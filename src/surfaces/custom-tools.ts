// OpenAI's custom tools (free-form input, optionally held to a grammar) for a model that knows
// only functions: the tool becomes a function taking one string, `input`, and its call's
// arguments are unwrapped back into that string. Chat and responses both use these.
import { isObj } from '../lib/json.ts'

/**
 * The JSON Schema a custom tool is offered with as a function: one string, described with its
 * grammar where it has one (`{ type: "grammar", definition }` on responses, the same under
 * `grammar` on chat).
 */
export function customToolParameters(name: string, format: unknown): Record<string, unknown> {
  const spec = isObj(format) && isObj(format.grammar) ? format.grammar : format
  const grammar = isObj(spec) && typeof spec.definition === 'string' ? `, in this grammar:\n${spec.definition}` : ''
  return { type: 'object', properties: { input: { type: 'string', description: `The raw input for ${name}${grammar}` } }, required: ['input'] }
}

/** A call's arguments (`{"input": "…"}`) → the custom tool's input; arguments of any other shape go as they came. */
export function customInputOf(args: string): string {
  try {
    const j = JSON.parse(args) as { input?: unknown }
    if (typeof j?.input === 'string') return j.input
  } catch {}
  return args
}

/** A custom tool call's input → the arguments of the function it is offered as. */
export const customArguments = (input: string): string => JSON.stringify({ input })
