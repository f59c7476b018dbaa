// A request that names a code-execution container by id: the surfaces say where (the plan's
// `containers`), and the pipeline asks the grants before anything else is done. One the key was
// not given (another key's, one it learnt elsewhere) or that has expired is refused as the
// upstream refuses a container it does not know: a 404 naming the field. A new container
// (OpenAI's `{ type: 'auto' }`, Anthropic's container left out or given without an id) needs no grant.
import { HttpError } from '../http/errors.ts'
import type { ContainerGrants } from './grants.ts'

/** A container id a request names, where it names it, and what to send instead for a new one. */
export interface NamedContainer {
  at: string
  id: string
  instead: string
}

export async function checkContainers(grants: ContainerGrants | undefined, apiKeyId: string, named: readonly NamedContainer[]): Promise<void> {
  if (!grants || named.length === 0) return
  const given = await grants.given(apiKeyId, named.map((n) => n.id))
  const bad = named.find((n) => !given.has(n.id))
  if (bad === undefined) return
  throw new HttpError(404, `${bad.at}: Container with id '${bad.id.slice(0, 80)}' not found: not a container a reply of this gateway gave this key (another key's, expired, or never given), whose files only that key may reach; ${bad.instead}`)
}

/** Anthropic's `container`: an id, or `{ id, skills }`; one without an id makes a new container. */
export function anthropicContainer(v: unknown, at = 'container'): NamedContainer[] {
  const id = typeof v === 'string' ? v : typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : undefined
  if (id === undefined) return []
  return [{ at: typeof v === 'string' ? at : `${at}.id`, id, instead: 'leave container out (or give it without an id) for a new one' }]
}

/** An OpenAI code interpreter tool's `container` named by id (`{ type: 'auto' }` makes a new one). */
export function codeInterpreterContainer(t: unknown, at: string): NamedContainer[] {
  if (typeof t !== 'object' || t === null) return []
  const { type, container } = t as { type?: unknown; container?: unknown }
  return type === 'code_interpreter' && typeof container === 'string' ? [{ at: `${at}.container`, id: container, instead: "send container: { type: 'auto' } for a new one" }] : []
}
