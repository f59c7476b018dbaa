// The sweep's checks: a condition, a call refused with a clear JSON 4xx, and a reply (with every
// object inside it) carrying each field the SDKs' types declare without `?`, read from the
// .d.ts of the project's node_modules (sdk-sweep.ts).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const NODE_MODULES = join(import.meta.dir, '..', '..', '..', 'node_modules')

export function ok(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(what)
}

/** The call must fail with a 4xx whose body is JSON with an error message naming `word`. */
export async function refused(f: () => Promise<unknown>, word: RegExp): Promise<string> {
  try {
    await f()
  } catch (e) {
    const err = e as { status?: number; error?: unknown; headers?: Headers; message?: string }
    ok(typeof err.status === 'number', `no HTTP status: ${err.message}`)
    ok(err.status >= 400 && err.status < 500, `status ${err.status}: ${err.message}`)
    ok(/json/.test(err.headers?.get('content-type') ?? ''), `not JSON: ${err.headers?.get('content-type')}`)
    const text = JSON.stringify(err.error ?? {})
    ok(word.test(text), `error does not name ${word}: ${text.slice(0, 300)}`)
    return `${err.status} ${text.slice(0, 100)}`
  }
  throw new Error('it succeeded')
}

/** The fields an SDK interface declares without `?` (its .d.ts read as text): never absent from a reply. */
function required(pkg: string, file: string, iface: string): string[] {
  const text = readFileSync(join(NODE_MODULES, pkg, 'resources', file), 'utf8')
  const start = text.search(new RegExp(`^export interface ${iface} (extends [^{]+)?\\{`, 'm'))
  ok(start >= 0, `no interface ${iface} in ${pkg}/${file}`)
  return [...text.slice(start, text.indexOf('\n}', start)).matchAll(/^    (\w+): /gm)].map((m) => m[1]!)
}

/** Every required field of `iface` is in `obj` (null where the type allows it is fine). */
export function shaped(obj: unknown, pkg: string, file: string, iface: string): string {
  const missing = required(pkg, file, iface).filter((k) => (obj as Record<string, unknown>)[k] === undefined)
  ok(missing.length === 0, `${iface} lacks ${missing.join(', ')}`)
  return `${iface} whole`
}
/** BetaUsage but its fallback_credit, which Anthropic sends only for a request with a fallback credit token. */
export function shapedBut(obj: unknown, iface: 'BetaUsage'): string {
  const missing = required(A, 'beta/messages/messages.d.ts', iface).filter((k) => k !== 'fallback_credit' && (obj as Record<string, unknown>)[k] === undefined)
  ok(missing.length === 0, `${iface} lacks ${missing.join(', ')}`)
  return `${iface} whole`
}
/** The packages whose .d.ts the shape checks read. */
export const A = '@anthropic-ai/sdk'
export const O = 'openai'

/** Interfaces of a .d.ts by the literal `type` they declare, with their required fields. */
const typedCache = new Map<string, Map<string, string[][]>>()
function typed(pkg: string, file: string): Map<string, string[][]> {
  const k = `${pkg}/${file}`
  let m = typedCache.get(k)
  if (m) return m
  m = new Map()
  const text = readFileSync(join(NODE_MODULES, pkg, 'resources', file), 'utf8')
  for (const b of text.matchAll(/^export interface (\w+) \{\n([\s\S]*?)\n\}/gm)) {
    const lit = /^    type: '([^']+)';/m.exec(b[2]!)?.[1]
    if (!lit) continue
    const fields = [...b[2]!.matchAll(/^    (\w+): /gm)].map((x) => x[1]!)
    m.set(lit, [...(m.get(lit) ?? []), fields])
  }
  typedCache.set(k, m)
  return m
}

/**
 * `obj` and every object under it with a `type` the .d.ts declares an interface for: one of
 * those interfaces has all its required fields there. Returns what was lacking, by path.
 */
export function lacking(obj: unknown, pkg: string, file: string, path = '$'): string[] {
  if (Array.isArray(obj)) return obj.flatMap((v, i) => lacking(v, pkg, file, `${path}[${i}]`))
  if (!obj || typeof obj !== 'object') return []
  const o = obj as Record<string, unknown>
  const out: string[] = []
  const shapes = typeof o.type === 'string' ? typed(pkg, file).get(o.type) : undefined
  if (shapes) {
    const misses = shapes.map((f) => f.filter((k) => o[k] === undefined))
    const best = misses.reduce((a, b) => (b.length < a.length ? b : a))
    if (best.length) out.push(`${path}(${o.type}) lacks ${best.join(',')}`)
  }
  // required_action is the specification's own extra ({id, type: "function", function}), no SDK type
  for (const [k, v] of Object.entries(o)) if (k !== 'required_action') out.push(...lacking(v, pkg, file, `${path}.${k}`))
  return out
}
