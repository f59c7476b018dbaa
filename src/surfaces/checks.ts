// What every surface's body checks share: TypeBox schemas compiled once, the first problem
// of a value named by its path from the top of the body, and the step every surface takes
// first — a JSON object with only parameters the surface knows.
import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { badRequest, echo } from '../http/errors.ts'
import { typeName } from '../routing/router.ts'
import { schemasOf, unknownParams, type ParamTable } from '../routing/params.ts'

const cache = new WeakMap<TSchema, TypeCheck<TSchema>>()

/** A value as an error message shows it: its JSON, cut at 40 characters. */
export const quote = (v: unknown): string => JSON.stringify(v)?.slice(0, 40) ?? String(v)

/** Client ids (tool calls') as an error message names them: the first five, quoted, each cut at 64 characters. */
export const quotedIds = (ids: Iterable<string>): string => [...ids].slice(0, 5).map((id) => `"${echo(id, 64)}"`).join(', ')

export function compiled(schema: TSchema): TypeCheck<TSchema> {
  let c = cache.get(schema)
  if (!c) {
    c = TypeCompiler.Compile(schema)
    cache.set(schema, c)
  }
  return c
}

/** A parameter table's value rules by parameter, compiled now so no request pays for it. */
export function paramSchemas(table: ParamTable): Record<string, TSchema> {
  const schemas = schemasOf(table)
  for (const s of Object.values(schemas)) compiled(s)
  return schemas
}

/** `/a/0/b` → `.a[0].b` */
function pointerToPath(pointer: string): string {
  let out = ''
  for (const seg of pointer.split('/').slice(1)) out += /^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`
  return out
}

/**
 * null when `value` satisfies `schema`, else `<path>: <what is wrong>` for the first
 * problem, where `path` names the field from the top of the request body.
 */
export function firstError(schema: TSchema, value: unknown, path: string): string | null {
  const c = compiled(schema)
  if (c.Check(value)) return null
  const e = c.Errors(value).First()
  if (!e) return `${path}: invalid value`
  const where = path + pointerToPath(e.path)
  if (e.type === ValueErrorType.ObjectRequiredProperty) return `${where}: required`
  const custom = (e.schema as { errorMessage?: string }).errorMessage
  return `${where}: ${custom ?? lowerFirst(e.message)}`
}

/** A 400 naming the first problem unless `value` satisfies `schema`; past it, the value has the schema's static type. */
export function checkValue<S extends TSchema>(schema: S, value: unknown, path: string): asserts value is Static<S> {
  const e = firstError(schema, value, path)
  if (e) throw badRequest(e)
}

function lowerFirst(s: string) {
  return s.charAt(0).toLowerCase() + s.slice(1)
}


type Body = Record<string, unknown>

/**
 * The body as an object with its null-valued parameters left out (the official APIs treat
 * `null` as "not given"), or a 400: not an object, or parameters the surface does not know.
 */
export function knownParams(raw: unknown, table: ParamTable): Body {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest(`Request body: expected a JSON object, got ${typeName(raw)}`)
  const body: Body = {}
  for (const [k, v] of Object.entries(raw)) {
    // An own `__proto__` key (JSON.parse makes one) would set the copy's prototype.
    if (k === '__proto__') throw badRequest('__proto__: not allowed as a parameter name')
    if (v !== null) body[k] = v
  }
  const unknown = unknownParams(body, table)
  if (unknown.length > 0) {
    const list = unknown.map((k) => (k.length > 64 ? k.slice(0, 64) + '…' : k)).slice(0, 20)
    throw badRequest(`Unknown parameter${unknown.length > 1 ? 's' : ''}: ${list.join(', ')}${unknown.length > 20 ? ', …' : ''}`)
  }
  return body
}
