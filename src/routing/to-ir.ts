// A checked body → the IR request, by the rows of its surface's table (params.ts says what a
// row's `ir` is). The body has lost what the family rules removed; what those parameters
// became (their counterparts, translate mode) fills in what the body's own did not set.
import type { CatalogModel } from '../config/catalog.ts'
import type { Family, GenerationRequest, ReasoningConfig } from '../ir/types.ts'
import type { ParamRow, ParamTable, RulesOutcome } from './params.ts'
import type { Counterpart } from './translate.ts'

type Mapping = readonly [name: string, ir: NonNullable<ParamRow['ir']>]

const mappings = new WeakMap<ParamTable, Mapping[]>()

/** The rows that map into the IR, in table order; worked out once per table. */
function mappingsOf(table: ParamTable): Mapping[] {
  let out = mappings.get(table)
  if (!out) {
    out = Object.entries(table.rows).flatMap(([name, row]): Mapping[] => (row.ir === undefined ? [] : [[name, row.ir]]))
    mappings.set(table, out)
  }
  return out
}

/** A copy of the body without the parameters the family rules removed. */
export function withoutRemoved<B extends object>(body: B, rules: RulesOutcome): B {
  const out = { ...body } as Record<string, unknown>
  for (const k of rules.removed) delete out[k]
  return out as B
}

/**
 * The IR request of a body whose family rules were applied (`withoutRemoved`): each present
 * parameter through its row, then the counterparts of translated ones, then the one rule that
 * spans rows (parallel calls turned off shows in the tool choice too, where there are tools).
 * A surface that reshapes some parameters first (a thread's turn) passes what they became as
 * `req`; the rows and counterparts build on it.
 */
export function rowsToIR(body: Record<string, unknown>, table: ParamTable, model: CatalogModel, rules: RulesOutcome, req: GenerationRequest = startIR(body, model)): GenerationRequest {
  const cx = { body, model, compat: rules.compat }
  for (const [name, ir] of mappingsOf(table)) {
    const v = body[name]
    if (v === undefined) continue
    if (typeof ir === 'string') (req as unknown as Record<string, unknown>)[ir] = v
    else if (typeof ir === 'function') ir(v as never, req, cx)
    else if (model.family === ir.carried) carry(req, ir.carried, name, v)
  }
  mergeCounterpart(req, rules.counterpart)
  if (req.parallelToolCalls === false && req.tools?.length && req.toolChoice?.type !== 'none') {
    req.toolChoice = { ...(req.toolChoice ?? { type: 'auto' }), disableParallel: true }
  }
  return req
}

/** An empty request for the body's model (as the client named it) that rows fill in. */
export function startIR(body: { model?: unknown }, model: CatalogModel): GenerationRequest {
  return { model: typeof body.model === 'string' ? body.model : model.id, messages: [], stream: false }
}

/** Counterparts fill what the body's own parameters left unset; stop sequences and tools add up. */
function mergeCounterpart(req: GenerationRequest, c: Counterpart): void {
  if (c.maxTokens !== undefined) req.maxTokens ??= c.maxTokens
  if (c.stop?.length) req.stop = [...(req.stop ?? []), ...c.stop]
  if (c.reasoning) req.reasoning = { ...c.reasoning, ...req.reasoning }
  if (c.responseFormat) req.responseFormat ??= c.responseFormat
  if (c.user !== undefined) req.user ??= c.user
  if (c.tools?.length) req.tools = [...(req.tools ?? []), ...c.tools]
  if (c.toolChoice) req.toolChoice ??= c.toolChoice
  if (c.disableParallel) req.parallelToolCalls ??= false
}

/** Puts a parameter with no IR field in the request's provider data, for an upstream of `family` only. */
export function carry(req: GenerationRequest, family: Family, name: string, value: unknown): void {
  const data = (req.providerData ??= {})
  ;(data[family] ??= {})[name] = value
}

/** The request's reasoning settings, made when a row first sets one. */
export function reasoningOf(req: GenerationRequest): ReasoningConfig {
  return (req.reasoning ??= {})
}

/** Adds stop sequences after those already set. */
export function addStops(req: GenerationRequest, stops: readonly string[]): void {
  if (stops.length > 0) req.stop = [...(req.stop ?? []), ...stops]
}
