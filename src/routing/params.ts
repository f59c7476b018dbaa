// A surface's parameters as one table (src/surfaces/<surface>/params.ts), and the functions
// that read it: which parameters a surface knows (any other is a 400 naming it), what each
// becomes for a model of either family, and which values are the provider's to grow. A row:
//   schema   the value's rule (TypeBox); absent where the decoder checks a tagged union itself
//   openai / anthropic
//            what the parameter becomes for a model of that family; absent: it goes upstream
//            as it is (on the surface's own family, the pass-through body carries it untouched)
//              foreign(t)  not the family's: a 400 when `compat.cross_family` is `reject`,
//                          else translated by `t` (or dropped) and named in x-switchyard-compat
//              IGNORED     harmless to leave out: dropped in both modes, named in the header
//              ignoredNamedIf(f)
//                          dropped in both modes, named in the header only when `f` says
//                          its value asked for something (`background: true`, not `false`)
//              partly(f)   carried, and named in the header when `f` says a part is left out
//   gateway  the gateway's own: acted on here (a pause at the first tool call), never sent
//            upstream, and not named either, since nothing was lost
//   shaped   an upstream of the surface's own wire gets it reshaped by the decoder (an alias
//            resolved, a thread expanded), not copied as it came
//   ir       what the value becomes in the IR (src/routing/to-ir.ts runs these): an IR field
//            it goes to as it is; carried(family), no IR field, so it rides to an upstream
//            of that family as it came; or a function that sets the IR fields it maps to
//            (it may read the rest of the body). Rows run in table order, so a row can build
//            on an earlier one (`functions` after `tools`). Absent: nothing in the IR (read
//            by another row, the gateway's own, or reshaped by the decoder first)
//   owned    a provider-owned value set (effort levels, tiers, verbosity): any string on the
//            surface's own family, where the upstream is the authority; a value the
//            translation knows on the other family. Either the values, or per sub-field.
// Adding a parameter is one row.
import type { Static, TSchema } from '@sinclair/typebox'
import type { CatalogModel } from '../config/catalog.ts'
import { badRequest, echo } from '../http/errors.ts'
import type { Family, GenerationRequest } from '../ir/types.ts'
import { COUNTERPART_WIRE, type Counterpart, type Translate } from './translate.ts'

export type CrossFamilyMode = 'reject' | 'translate'

export type FamilyRule = { foreign: Translate } | { ignored: true; named?: (value: unknown) => boolean } | { partly: (value: unknown) => boolean }

/** IR fields a parameter's value is copied to unchanged. */
export type DirectIR = 'temperature' | 'topP' | 'topK' | 'maxTokens' | 'stream' | 'parallelToolCalls' | 'user' | 'metadata' | 'betas'

/** What a row's mapping sees beside its value: the whole body (family rules applied), the model, the compat names so far. */
export interface IRContext {
  body: Record<string, unknown>
  model: CatalogModel
  compat: string[]
}

/**
 * A value → the IR fields it maps to, set on `req`. The value has passed the row's schema;
 * a row types it by annotating the parameter (`(v: string[], req) => …`).
 */
export type ToIR = (value: never, req: GenerationRequest, cx: IRContext) => void

/** A parameter with no IR field, carried as it came to an upstream of `family` only. */
export interface Carried { carried: Family }
export const carried = (family: Family): Carried => ({ carried: family })

export interface ParamRow {
  schema?: TSchema
  gateway?: true
  shaped?: true
  ir?: DirectIR | Carried | ToIR
  openai?: FamilyRule
  anthropic?: FamilyRule
  owned?: readonly string[] | Readonly<Record<string, readonly string[]>>
}

export interface ParamTable {
  /** The family whose API the surface speaks. */
  family: Family
  rows: Readonly<Record<string, ParamRow>>
}

/**
 * A body whose values passed its table's rules, as a type: every parameter optional, typed by
 * its row's schema (unknown where the decoder checks a row itself). Declare a table with
 * `satisfies ParamTable` so that its rows keep their schemas' types.
 */
export type BodyOf<P extends ParamTable> = {
  -readonly [K in keyof P['rows']]?: P['rows'][K] extends { readonly schema: infer S extends TSchema } ? Static<S> : unknown
}

export const foreign = (t: Translate): FamilyRule => ({ foreign: t })
export const IGNORED: FamilyRule = { ignored: true }
export const ignoredNamedIf = (named: (value: unknown) => boolean): FamilyRule => ({ ignored: true, named })
export const partly = (leftOut: (value: unknown) => boolean): FamilyRule => ({ partly: leftOut })

export interface RulesOutcome {
  /** Merged counterparts of translated parameters (translate mode only). */
  counterpart: Counterpart
  /** Top-level parameters to leave out of what goes upstream. */
  removed: string[]
  /** What the `x-switchyard-compat` header says: `name->target` or `name` (dropped). */
  compat: string[]
}

const ruleOf = (table: ParamTable, name: string, family: Family): FamilyRule | undefined =>
  Object.hasOwn(table.rows, name) ? table.rows[name]![family] : undefined

/**
 * What each parameter of a body becomes for a model of `family`. Throws a 400 listing every
 * foreign parameter in reject mode; otherwise says what each became. Foreign ones come first
 * (in body order), then the ignored ones, then the partly carried ones.
 */
export function applyFamilyRules(body: Record<string, unknown>, table: ParamTable, family: Family, mode: CrossFamilyMode, modelId: string): RulesOutcome {
  const present = Object.keys(body).filter((k) => body[k] !== undefined)
  const foreignNames = present.filter((k) => {
    const r = ruleOf(table, k, family)
    return r !== undefined && 'foreign' in r
  })
  if (foreignNames.length > 0 && mode === 'reject') {
    const label = family === 'anthropic' ? 'Claude-family' : 'OpenAI-family'
    throw badRequest(`Parameters not supported for ${label} model ${modelId}: ${foreignNames.join(', ')}`)
  }
  const out: RulesOutcome = { counterpart: {}, removed: [], compat: [] }
  for (const name of foreignNames) {
    const c = (ruleOf(table, name, family) as { foreign: Translate }).foreign(body[name])
    out.removed.push(name)
    if (c) {
      mergeCounterpart(out.counterpart, c)
      out.compat.push(`${name}->${(Object.keys(c) as (keyof Counterpart)[]).map((k) => COUNTERPART_WIRE[family][k]).join('+')}`)
    } else out.compat.push(name)
  }
  for (const name of present) {
    const r = ruleOf(table, name, family)
    if (r === undefined || !('ignored' in r)) continue
    out.removed.push(name)
    if (r.named === undefined || r.named(body[name])) out.compat.push(name)
  }
  for (const name of present) {
    const r = ruleOf(table, name, family)
    if (r !== undefined && 'partly' in r && r.partly(body[name])) out.compat.push(name)
    else if (r === undefined && table.rows[name]?.gateway === true) out.removed.push(name)
  }
  return out
}

function mergeCounterpart(into: Counterpart, c: Counterpart) {
  const { reasoning, ...rest } = c
  Object.assign(into, rest)
  if (reasoning) into.reasoning = { ...into.reasoning, ...reasoning }
}

/** The parameters an upstream of the surface's own wire gets as they came: no rule for that family, not reshaped. */
export function copiedAsIs(table: ParamTable): string[] {
  return Object.entries(table.rows)
    .filter(([, row]) => row[table.family] === undefined && row.shaped !== true && row.gateway !== true)
    .map(([name]) => name)
}

/** Parameters of a body that the surface does not know at all, in body order. */
export function unknownParams(body: Record<string, unknown>, table: ParamTable): string[] {
  return Object.keys(body).filter((k) => !Object.hasOwn(table.rows, k))
}

/** Every parameter the table knows. */
export const knownNames = (table: ParamTable): string[] => Object.keys(table.rows)

/** The value rules of the table's rows, by parameter, for a decoder. */
export function schemasOf(table: ParamTable): Record<string, TSchema> {
  const out: Record<string, TSchema> = {}
  for (const [name, row] of Object.entries(table.rows)) if (row.schema) out[name] = row.schema
  return out
}

/**
 * Checks the provider-owned fields of a body whose model is known: any string on the
 * surface's own family; a value the translation knows otherwise.
 */
export function checkOwnedValues(table: ParamTable, body: Record<string, unknown>, model: CatalogModel): void {
  if (model.family === table.family) return
  for (const [name, row] of Object.entries(table.rows)) {
    if (!row.owned || !Object.hasOwn(body, name)) continue
    const sets: [string, unknown, readonly string[]][] = Array.isArray(row.owned)
      ? [[name, body[name], row.owned as readonly string[]]]
      : Object.entries(row.owned).map(([sub, known]) => [`${name}.${sub}`, field(body[name], sub), known])
    for (const [path, v, known] of sets) {
      if (typeof v !== 'string' || known.includes(v)) continue
      throw badRequest(`${path}: "${echo(v)}" cannot be translated for ${model.id} (a ${model.family === 'anthropic' ? 'Claude' : 'GPT'}-family model); known values: ${known.map((k) => `"${k}"`).join(', ')}`)
    }
  }
}

function field(v: unknown, k: string): unknown {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, k) ? (v as Record<string, unknown>)[k] : undefined
}

/** The header stays well inside what any HTTP client reads (some stop at 64 KB for all headers). */
const MAX_COMPAT_HEADER = 1_000

/** Names what was left out or changed in a request's compat list, each once (the list may be walked again: a fallback, an IR built twice). */
export function addCompat(compat: string[], names: readonly string[]): void {
  for (const n of names) if (!compat.includes(n)) compat.push(n)
}

/**
 * The response header value, or undefined when nothing was translated or dropped. Entries are
 * the gateway's own field names; anything outside printable ASCII is left out (a header value
 * must be Latin-1), each entry is named once, and the whole is bounded.
 */
export function compatHeader(compat: string[]): string | undefined {
  if (compat.length === 0) return undefined
  const entries = [...new Set(compat.map((c) => c.replace(/[^\x20-\x7e]/g, '')))].filter(Boolean)
  let out = ''
  for (const e of entries) {
    const next = out ? `${out}, ${e}` : e
    if (next.length > MAX_COMPAT_HEADER) return `${out}, ...`
    out = next
  }
  return out || undefined
}
