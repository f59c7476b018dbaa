// What a parameter foreign to a model's family becomes when `compat.cross_family` is
// `translate`: its counterpart in IR terms, or nothing (dropped, and named in the
// `x-switchyard-compat` header). The surfaces' parameter tables (src/surfaces/*/params.ts)
// name these per row.
import type { Family, ProviderData, ReasoningConfig, ReasoningEffort, ResponseFormat, Tool, ToolChoice } from '../ir/types.ts'
import { isObj } from '../lib/json.ts'
import { refsAlone } from './strict-refs.ts'
import { fitStrict } from './strict-fit.ts'
import { withinStrictLimits } from './strict-limits.ts'

/**
 * What a foreign parameter becomes in translate mode, in IR terms. A surface that
 * decodes into the IR merges it; a pass-through surface spells it in its own wire.
 */
export interface Counterpart {
  maxTokens?: number
  stop?: string[]
  reasoning?: ReasoningConfig
  responseFormat?: ResponseFormat
  disableParallel?: boolean
  user?: string
  tools?: Tool[]
  toolChoice?: ToolChoice
}

/**
 * A counterpart's fields in the wire of the family it goes to, as x-switchyard-compat names them
 * (`max_completion_tokens->max_tokens`): a Claude model is sent Messages parameters, a GPT model
 * translated from the messages surface chat parameters.
 */
export const COUNTERPART_WIRE: Record<Family, Record<keyof Counterpart, string>> = {
  anthropic: {
    maxTokens: 'max_tokens', stop: 'stop_sequences', reasoning: 'thinking', responseFormat: 'output_config.format',
    disableParallel: 'tool_choice.disable_parallel_tool_use', user: 'metadata.user_id', tools: 'tools', toolChoice: 'tool_choice',
  },
  openai: {
    maxTokens: 'max_completion_tokens', stop: 'stop', reasoning: 'reasoning_effort', responseFormat: 'response_format',
    disableParallel: 'parallel_tool_calls', user: 'user', tools: 'tools', toolChoice: 'tool_choice',
  },
}

/** null = no counterpart: the parameter is dropped (and named in the compat header). */
export type Translate = (value: unknown) => Counterpart | null

export const drop: Translate = () => null

const EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']

/** Anthropic thinking budget → the nearest OpenAI effort (OpenAI's own tiers, roughly 1k/8k/24k). */
export function effortForBudget(budget: number): ReasoningEffort {
  if (budget <= 2048) return 'low'
  if (budget <= 16_384) return 'medium'
  return 'high'
}


export const thinkingToEffort: Translate = (v) => {
  if (!isObj(v)) return null
  if (v.type === 'disabled') return { reasoning: { effort: 'none' } }
  if (typeof v.budget_tokens === 'number') return { reasoning: { effort: effortForBudget(v.budget_tokens) } }
  // `adaptive` thinking (newer Claude models) has no budget: the model's default effort.
  return { reasoning: { effort: 'medium' } }
}

/**
 * A Claude output_config's own JSON-schema format (`output_config.format`, as a Messages client
 * gave it), as a JSON schema reply in IR terms, unchanged; undefined where it asks none.
 */
export function carriedClaudeFormat(config: unknown): Extract<ResponseFormat, { type: 'json_schema' }> | undefined {
  const format = isObj(config) ? config.format : undefined
  return isObj(format) && format.type === 'json_schema' && isObj(format.schema) ? { type: 'json_schema', name: 'output', schema: format.schema } : undefined
}

/**
 * Anthropic's JSON-schema output format as OpenAI's json_schema response format (strict, as
 * Anthropic's is), with no keyword beside a `$ref`, which strict mode refuses. `fit`: a schema
 * strict mode refuses as it is is made to fit where that is faithful (strictFor); only a surface
 * that takes the added nulls out of the answer asks for it (the messages surface does).
 */
export function claudeFormat(f: unknown, fit = false): ResponseFormat | undefined {
  if (!isObj(f) || f.type !== 'json_schema') return undefined
  if (!isObj(f.schema)) return { type: 'json_schema', name: 'output', schema: undefined, strict: false }
  const { schema, strict } = fit ? strictFor(f.schema) : asItFits(refsAlone(f.schema))
  return { type: 'json_schema', name: 'output', schema, strict }
}

/**
 * A client's strict schema for OpenAI's strict mode: with no keyword beside a `$ref`, without its
 * annotations, and fitted (optional properties required and nullable, objects closed: strict-fit.ts),
 * the nulls that adds noted for the answer (`addedNullsOf`). Where it
 * cannot fit, or is past the size strict mode takes (strict-limits.ts), `strict` is false and the
 * schema goes without the guarantee.
 */
export function strictFor(schema: Record<string, unknown>): { schema: Record<string, unknown>; strict: boolean } {
  const alone = refsAlone(schema)
  if (!strictRoot(alone) || !withinStrictLimits(alone)) return { schema: alone, strict: false }
  // a schema that fits as it is goes the same way: fitStrict leaves it as it is but for its
  // annotations, and refuses a keyword strict mode would (a 400 for the whole request)
  const fitted = fitStrict(alone)
  return fitted ? { schema: fitted, strict: true } : { schema: alone, strict: false }
}

const asItFits = (schema: Record<string, unknown>) => ({ schema, strict: strictRoot(schema) && strictFits(schema) && withinStrictLimits(schema) })

/** OpenAI's strict mode takes a root that is an object, never a root anyOf (a 400 for the whole request). */
const strictRoot = (schema: Record<string, unknown>) => schema.type === 'object' && schema.anyOf === undefined

/**
 * A Claude custom tool for a GPT model. Anthropic holds a strict tool's input to schemas OpenAI's
 * strict mode refuses, with a 400 for the whole request: a property left optional, an object left
 * open, a keyword beside a `$ref`. Its schema goes with no keyword beside a `$ref`, made to fit
 * where that is faithful (strictFor: an optional property required and nullable, an object that
 * said nothing of extra properties closed; the messages surface takes the added nulls out of the
 * model's arguments), and `strict` where it fits; else without it (OpenAI follows the schema
 * without the guarantee), its `strict` left among what a function has no field for, so the compat
 * header names it. A tool not strict is as it came.
 */
export function claudeTool(t: Tool): Tool {
  if (t.strict !== true) return t
  const { strict: _, providerData, ...rest } = t
  const { schema: parameters, strict: fits } = strictFor(t.parameters)
  // kept, strict is the function's own field; lost, it stays among the Claude-only fields
  const { strict: __, ...own } = providerData?.anthropic ?? {}
  const anthropic = fits ? own : { ...own, strict: true }
  const { anthropic: ___, ...others } = providerData ?? {}
  const data: ProviderData = Object.keys(anthropic).length > 0 ? { ...others, anthropic } : others
  return { ...rest, parameters, ...(fits && { strict: true }), ...(Object.keys(data).length > 0 && { providerData: data }) }
}

/** How deep strictFits looks (a schema deeper than this is sent without strict). */
const STRICT_DEPTH = 64

/**
 * Whether OpenAI's strict mode takes `schema`: every object closed (`additionalProperties:
 * false`) with all its properties required. A schema Anthropic takes may leave a property
 * optional, which strict mode refuses with a 400; such a schema is made to fit where it can
 * (strictFor), else sent without strict, and OpenAI follows it without the guarantee.
 */
export function strictFits(schema: unknown, depth = 0): boolean {
  if (depth > STRICT_DEPTH) return false
  if (Array.isArray(schema)) return schema.every((s) => strictFits(s, depth + 1))
  if (!isObj(schema)) return true
  if (schema.type === 'object' || isObj(schema.properties)) {
    if (schema.additionalProperties !== false) return false
    const props = isObj(schema.properties) ? Object.keys(schema.properties) : []
    // a set: a schema of many properties is linear to check, not quadratic
    const required = new Set(Array.isArray(schema.required) ? schema.required : [])
    if (!props.every((p) => required.has(p))) return false
  }
  for (const k of ['properties', '$defs', 'definitions']) if (isObj(schema[k]) && !Object.values(schema[k]).every((s) => strictFits(s, depth + 1))) return false
  for (const k of ['items', 'anyOf', 'allOf', 'oneOf', 'prefixItems']) if (schema[k] !== undefined && !strictFits(schema[k], depth + 1)) return false
  return true
}

/**
 * Anthropic's `output_config`: its effort is OpenAI's reasoning effort (both have `max`), and
 * a JSON-schema `format` is OpenAI's json_schema response format (strict, as Anthropic's is;
 * `fit` as claudeFormat's).
 */
export function claudeOutputConfig(v: unknown, fit = false): Counterpart | null {
  if (!isObj(v)) return null
  const out: Counterpart = {}
  if (EFFORTS.includes(v.effort as ReasoningEffort)) out.reasoning = { effort: v.effort as ReasoningEffort }
  const format = claudeFormat(v.format, fit)
  if (format) out.responseFormat = format
  return Object.keys(out).length > 0 ? out : null
}

/** The chat surface's foreign `output_config`: not fitted, as its answer is not cleaned of added nulls. */
export const outputConfigToOpenAI: Translate = (v) => claudeOutputConfig(v)

export const stopSequencesToStop: Translate = (v) =>
  Array.isArray(v) && v.every((s) => typeof s === 'string') ? { stop: v as string[] } : null

export const maxCompletionToMax: Translate = (v) => (typeof v === 'number' ? { maxTokens: v } : null)

// `true` is the default on both sides, so only `false` has something to carry.
export const parallelToDisable: Translate = (v) => (v === false ? { disableParallel: true } : null)

export const responseFormatToStructured: Translate = (v) => {
  if (!isObj(v) || v.type !== 'json_schema' || !isObj(v.json_schema)) return null
  const js = v.json_schema
  if (typeof js.name !== 'string') return null
  return {
    responseFormat: {
      type: 'json_schema',
      name: js.name,
      schema: isObj(js.schema) ? js.schema : undefined,
      strict: typeof js.strict === 'boolean' ? js.strict : undefined,
      description: typeof js.description === 'string' ? js.description : undefined,
    },
  }
}

export const userToUser: Translate = (v) => (typeof v === 'string' ? { user: v } : null)

// Legacy function calling is tool calling under another name.
export const functionsToTools: Translate = (v) => {
  if (!Array.isArray(v)) return null
  const tools = v.filter(isObj).map((f) => ({
    name: String(f.name),
    description: typeof f.description === 'string' ? f.description : undefined,
    parameters: isObj(f.parameters) ? f.parameters : { type: 'object', properties: {} },
  }))
  return { tools }
}

export const functionCallToChoice: Translate = (v) => {
  if (v === 'none') return { toolChoice: { type: 'none' } }
  if (v === 'auto') return { toolChoice: { type: 'auto' } }
  if (isObj(v) && typeof v.name === 'string') return { toolChoice: { type: 'tool', name: v.name } }
  return null
}
