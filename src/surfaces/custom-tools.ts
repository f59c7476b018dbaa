// OpenAI's custom tools (free-form input, optionally held to a grammar) for a model that knows
// only functions: the tool becomes a function taking one string, `input`, and its call's
// arguments are unwrapped back into that string. Chat and responses both use these.
import { badRequest } from '../http/errors.ts'
import { isObj } from '../lib/json.ts'
import { typeName } from '../routing/router.ts'
import { quote } from './checks.ts'

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

/** A custom tool's input format: `{ type: "text" }`, or a grammar `{ type: "grammar", syntax, definition }` (its syntaxes OpenAI's to grow; read into a translated tool's description). */
export function checkCustomFormat(f: unknown, at: string): void {
  if (f === undefined || f === null) return
  if (!isObj(f)) throw badRequest(`${at}: expected { type: "text" } or { type: "grammar", syntax, definition }, got ${typeName(f)}`)
  if (f.type === 'text') return
  if (f.type !== 'grammar') throw badRequest(`${at}.type: expected "text" or "grammar", got ${quote(f.type)}`)
  // chat's spelling nests the grammar; customToolParameters reads either
  const [g, where] = isObj(f.grammar) ? [f.grammar, `${at}.grammar`] : [f, at]
  const got = (v: unknown) => (v === undefined ? 'none' : typeName(v))
  if (typeof g.syntax !== 'string') throw badRequest(`${where}.syntax: expected "lark" or "regex", got ${got(g.syntax)}`)
  if (typeof g.definition !== 'string') throw badRequest(`${where}.definition: expected the grammar as a string, got ${got(g.definition)}`)
}
