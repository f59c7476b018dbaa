// The client's tools and tool choice in the Responses spelling, checked for what the gateway
// reads from them: a function or custom tool's name, a function's parameters, the tool a
// choice names. Any other tool type (the hosted ones) is carried as it came, fields the
// gateway does not read included: they go upstream.
import { badRequest } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { isObj, type Obj } from '../../lib/json.ts'
import { checkContextSize, checkLocation } from '../openai-options.ts'
import { WEB_SEARCH_TOOLS } from './web-search.ts'
import { checkCustomFormat } from '../custom-tools.ts'
import { quote } from '../checks.ts'

export type FunctionTool = Obj & { type: 'function'; name: string; description?: unknown; parameters?: unknown; strict?: unknown }
export type CustomTool = Obj & { type: 'custom'; name: string; description?: unknown; format?: unknown }
/** Any other tool: tool() checked its type is a string; one handed over in the input may have none. */
export type OtherTool = Obj & { type?: unknown }
/** A tool as tool() leaves it; a function or custom one is told apart by isCallable. */
export type ResponsesTool = FunctionTool | CustomTool | OtherTool

/** A tool choice as toolChoice() leaves it: a mode, a tool among the tools, or another type as it came. */
export type ResponsesToolChoice = 'auto' | 'none' | 'required' | { type: 'function' | 'custom'; name: string; namespace?: string } | (Obj & { type: string })

const FUNCTION_NAME = /^[a-zA-Z0-9_.-]{1,128}$/

/** A function or custom tool (its name is a string: tool() checked it, isTool for a handed-over one). */
export const isCallable = (t: ResponsesTool): t is FunctionTool | CustomTool => t.type === 'function' || t.type === 'custom'

/** A tool handed over in the input (tool() did not check it) that reads as a ResponsesTool: a function or custom one has a name. */
export const isTool = (t: unknown): t is ResponsesTool => isObj(t) && ((t.type !== 'function' && t.type !== 'custom') || typeof t.name === 'string')

/** A tool in the official flat shape; function and custom tools checked. */
export function tool(t: unknown, at: string): ResponsesTool {
  if (!isObj(t)) throw badRequest(`${at}: expected a tool object, got ${typeName(t)}`)
  const type = t.type
  if (typeof type !== 'string') throw badRequest(`${at}.type: required`)
  let out = t
  if (type === 'function' && isObj(t.function)) {
    const { function: f, ...rest } = t
    out = { ...rest, ...f, type }
  }
  if (type === 'namespace' && Array.isArray(out.tools)) {
    // its function and custom members are offered by name where the upstream has no namespaces
    out.tools.forEach((m, j) => {
      if (isObj(m) && (m.type === 'function' || m.type === 'custom')) checkCallable(m, m.type, `${at}.tools[${j}]`)
    })
  }
  if (WEB_SEARCH_TOOLS.has(type)) checkWebSearch(out, at)
  if (type !== 'function' && type !== 'custom') return { ...out, type }
  return { ...out, type, name: checkCallable(out, type, at) }
}

/** A function or custom tool's fields a translation reads (one of another type would be left out there, the model told less) → its name. */
function checkCallable(t: Obj, type: 'function' | 'custom', at: string): string {
  const name = t.name
  if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) throw badRequest(`${at}.name: expected a name of letters, digits, _ . or - (at most 128), got ${quote(name)}`)
  if (type === 'function' && t.parameters !== undefined && t.parameters !== null && !isObj(t.parameters)) throw badRequest(`${at}.parameters: expected a JSON Schema object`)
  if (t.description != null && typeof t.description !== 'string') throw badRequest(`${at}.description: expected a string, got ${typeName(t.description)}`)
  if (type === 'function' && t.strict != null && typeof t.strict !== 'boolean') throw badRequest(`${at}.strict: expected a boolean (true or false), got ${typeName(t.strict)}`)
  if (type === 'custom') checkCustomFormat(t.format, `${at}.format`)
  return name
}

/**
 * A web search tool's settings, checked as OpenAI checks them, for either family: a Claude
 * model's search reads them (web-search.ts), and a filter or location of the wrong type would
 * otherwise be left out there, the search running unfiltered or from nowhere.
 */
function checkWebSearch(t: Obj, at: string): void {
  const f = t.filters
  if (f !== undefined && f !== null) {
    if (!isObj(f)) throw badRequest(`${at}.filters: expected an object or null, got ${typeName(f)}`)
    const d = f.allowed_domains
    if (d !== undefined && d !== null) {
      if (!Array.isArray(d)) throw badRequest(`${at}.filters.allowed_domains: expected an array of domains or null, got ${typeName(d)}`)
      d.forEach((x, i) => {
        if (typeof x !== 'string' || x === '') throw badRequest(`${at}.filters.allowed_domains[${i}]: expected a domain name, got ${quote(x)}`)
      })
    }
  }
  checkLocation(t.user_location, `${at}.user_location`)
  checkContextSize(t.search_context_size, `${at}.search_context_size`)
}

export function legacyFunctions(v: unknown[]): ResponsesTool[] {
  return v.map((f, i) => {
    if (!isObj(f)) throw badRequest(`functions[${i}]: expected an object`)
    return tool({ type: 'function', ...f }, `functions[${i}]`)
  })
}

const MODES: ReadonlySet<unknown> = new Set(['auto', 'none', 'required'])
const isMode = (c: unknown): c is 'auto' | 'none' | 'required' => MODES.has(c)

/** tool_choice in the Responses spelling; a named tool must be among the tools. */
export function toolChoice(c: unknown, tools: ResponsesTool[], at: string): ResponsesToolChoice {
  if (typeof c === 'string') {
    if (!isMode(c)) throw badRequest(`${at}: expected "auto", "none", "required" or an object, got ${quote(c)}`)
    return c
  }
  if (!isObj(c) || typeof c.type !== 'string') throw badRequest(`${at}: expected "auto", "none", "required" or { type: "function", name }`)
  const type = c.type
  if (type === 'allowed_tools') {
    if (c.mode !== 'auto' && c.mode !== 'required') throw badRequest(`${at}.mode: expected "auto" or "required", got ${quote(c.mode)}`)
    if (!Array.isArray(c.tools) || c.tools.length === 0) throw badRequest(`${at}.tools: expected a non-empty array of tools`)
  }
  if (type !== 'function' && type !== 'custom') return { ...c, type }
  const name = isObj(c.function) ? c.function.name : c.name
  if (typeof name !== 'string') throw badRequest(`${at}.name: required`)
  // a namespace's tool is named with its namespace
  if (typeof c.namespace === 'string') {
    const ns = tools.find((t) => t.type === 'namespace' && t.name === c.namespace)
    const member = Array.isArray(ns?.tools) && ns.tools.some((m) => isObj(m) && m.type === type && m.name === name)
    if (!member) throw badRequest(`${at}: names ${type} tool "${name.slice(0, 64)}" of namespace "${c.namespace.slice(0, 64)}", which is not among the tools`)
    return { type, name, namespace: c.namespace }
  }
  if (!tools.some((t) => t.type === type && t.name === name)) throw badRequest(`${at}: names ${type} tool "${name.slice(0, 64)}", which is not among the tools`)
  return { type, name }
}
