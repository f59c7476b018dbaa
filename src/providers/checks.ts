// Request checks both upstream wires need before translating (pure, no I/O).
import type { GenerationRequest } from '../ir/types.ts'
import { bounded } from '../http/errors.ts'
import { crowdedHidden, parseHidden } from '../http/hidden-json.ts'
import type { PartBounds } from '../http/parts.ts'
import { UpstreamError } from './types.ts'

/** A request the gateway refuses before the call; client values it quotes are cut (http/errors.ts). */
export const badRequest = (message: string) => new UpstreamError({ status: 400, message: bounded(message), type: 'invalid_request_error' })

/** A tool_choice that names a tool must name one the request defines. */
export function checkToolChoice(req: GenerationRequest): void {
  const c = req.toolChoice
  if (!c || c.type === 'auto' || c.type === 'none') return
  const names = (req.tools ?? []).map((t) => t.name)
  if (names.length === 0) throw badRequest(`tool_choice "${c.type === 'tool' ? c.name : c.type}" needs tools, but the request defines none`)
  if (c.type === 'tool' && !names.includes(c.name)) {
    throw badRequest(`tool_choice names tool "${c.name}", which is not among the request's tools (${names.join(', ')})`)
  }
}

/**
 * Tool-call arguments as a JSON object for wires that take an object (empty text → {}). They are
 * the client's JSON in a string: parsed under a body's rules, their parts taken from `left`, what
 * the request's hidden JSON may still hold (hidden-json.ts). A nest two million deep in 4 MB held
 * the loop over a second and overflowed the stack where the request was encoded (a 502).
 */
export function parseArguments(args: string, where: string, left: PartBounds): Record<string, unknown> {
  if (args.trim() === '') return {}
  const j = parseHidden(args, left)
  if ('crowded' in j) throw badRequest(`${where}: tool call arguments hold ${crowdedHidden}, with the rest of this request's tool calls`)
  if ('broken' in j) throw badRequest(`${where}: tool call arguments: ${j.broken}`)
  const v = 'value' in j ? j.value : undefined
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>
  throw badRequest(`${where}: tool call arguments must be a JSON object`)
}
