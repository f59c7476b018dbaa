// Namespace tools (`{type: 'namespace', name, tools}`: Codex's `multi_agent_v1`, the functions a
// code-mode model is handed in `additional_tools`) for a model served through the IR, which
// knows flat tools only. Each function or custom member is offered under its own name, or as
// `{namespace}__{name}` where that name is taken; the model's call comes back under the member's
// name with its `namespace`, as OpenAI's own calls of a namespaced tool do, and a call sent back
// with its namespace goes to the model under the name it was offered by. A namespace given
// twice (in `tools` and handed over again on a later turn) offers its members once.
import { shortName } from '../../lib/short-name.ts'
import { isCallable, isTool, type ResponsesTool } from './tools.ts'
import type { Turn } from './turn.ts'

/** What a flat tool name stands for: a member of a namespace. */
export interface Member {
  namespace: string
  name: string
}

export interface OpenedTools {
  /** The turn's tools flat, each with where it came from (for errors): a namespace's callable members in its place. */
  tools: { tool: ResponsesTool; at: string }[]
  /** A flat name → the member it stands for. */
  members: Map<string, Member>
  /** A member (`namespace` NUL `name`) → its flat name. */
  flat: Map<string, string>
  /** A namespace's members the IR has no form for (hosted types), by type: left out, to be named. */
  dropped: string[]
}

const isNamespace = (t: ResponsesTool): t is ResponsesTool & { name: string; tools: unknown[] } =>
  t.type === 'namespace' && typeof t.name === 'string' && Array.isArray(t.tools)

const key = (namespace: string, name: string) => `${namespace}\u0000${name}`

/** The longest tool name a Claude model takes. */
const MAX_NAME = 128

/** A member's flat name: its own where free, else `{namespace}__{name}` (numbered, or hashed past MAX_NAME, until free). */
function flatNameFor(namespace: string, name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name
  for (let n = 0; ; n++) {
    const flat = shortName(`${namespace}__${name}${n === 0 ? '' : `_${n}`}`, MAX_NAME, `${namespace}\u0000${name}\u0000${n}`)
    if (!taken.has(flat)) return flat
  }
}

/**
 * The tools a turn offers, namespaces opened: its own (`tools[i]`), then those its input's
 * `additional_tools` items hand over. A namespace with no function or custom member stays as it
 * is (a tool type the IR has no form for, named where it is left out).
 */
export function openTools(turn: Pick<Turn, 'tools' | 'history' | 'items'>): OpenedTools {
  const handed: ResponsesTool[] = []
  // the two lists walked in place, not spread into one: a thread's history may hold 60,000 items
  for (const list of [turn.history, turn.items]) {
    for (const it of list) {
      if (it.type !== 'additional_tools') continue
      for (const t of it.tools) if (isTool(t)) handed.push(t)
    }
  }
  const listed = [...turn.tools.map((tool, i) => ({ tool, at: `tools[${i}]` })), ...handed.map((tool) => ({ tool, at: 'input.additional_tools' }))]
  const taken = new Set(listed.flatMap(({ tool }) => (isCallable(tool) ? [tool.name] : [])))
  const out: OpenedTools = { tools: [], members: new Map(), flat: new Map(), dropped: [] }
  for (const { tool, at } of listed) {
    const members = isNamespace(tool) ? tool.tools.filter((m): m is ResponsesTool => isTool(m)) : []
    const callable = members.filter((m): m is ResponsesTool & { name: string } => isCallable(m))
    if (!isNamespace(tool) || callable.length === 0) {
      out.tools.push({ tool, at })
      continue
    }
    for (const m of members) if (!isCallable(m)) out.dropped.push(`tools.namespace.${typeof m.type === 'string' ? m.type.slice(0, 40) : 'unknown'}`)
    for (const m of callable) {
      // the same member again (its namespace given twice): offered once, under one name
      if (out.flat.has(key(tool.name, m.name))) continue
      const name = flatNameFor(tool.name, m.name, taken)
      taken.add(name)
      out.members.set(name, { namespace: tool.name, name: m.name })
      out.flat.set(key(tool.name, m.name), name)
      out.tools.push({ tool: { ...m, name }, at: `${at}.tools` })
    }
  }
  return out
}

/** The flat name a call sent back goes to the model under: its member's, when it names a namespace. */
export function flatName(opened: OpenedTools, it: { name: string; namespace?: unknown }): string {
  return typeof it.namespace === 'string' ? (opened.flat.get(key(it.namespace, it.name)) ?? it.name) : it.name
}

/** The flat names an `allowed_tools` entry stands for: a namespace's members, a member named with its namespace, or a tool by its name. */
export function allowedFlat(opened: OpenedTools, entry: { type?: unknown; name?: unknown; namespace?: unknown }): string[] {
  if (typeof entry.name !== 'string') return []
  if (entry.type === 'namespace') return [...opened.members].flatMap(([flat, m]) => (m.namespace === entry.name ? [flat] : []))
  return [flatName(opened, { name: entry.name, namespace: entry.namespace })]
}
