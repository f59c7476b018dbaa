// The family parameter rules of spec §8, as data. Every surface asks one function,
// `applyFamilyRules`, which parameters of a request body are foreign to the called
// model's family; `compat.cross_family` decides whether those are rejected (400, the
// spec's default) or translated to a counterpart / dropped and named in the
// `x-switchyard-compat` response header.
import type { Family, ReasoningConfig, ReasoningEffort, ResponseFormat, Tool, ToolChoice } from '../ir/types.ts'
import type { Surface } from '../config/catalog.ts'
import { badRequest } from '../http/errors.ts'

export type CrossFamilyMode = 'reject' | 'translate'

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

/** null = no counterpart: the parameter is dropped (and named in the compat header). */
type Translate = (value: unknown) => Counterpart | null

const drop: Translate = () => null

const EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh']

/** Anthropic thinking budget → the nearest OpenAI effort (OpenAI's own tiers, roughly 1k/8k/24k). */
export function effortForBudget(budget: number): ReasoningEffort {
  if (budget <= 2048) return 'low'
  if (budget <= 16_384) return 'medium'
  return 'high'
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const thinkingToEffort: Translate = (v) => {
  if (!isObj(v)) return null
  if (v.type === 'disabled') return { reasoning: { effort: 'none' } }
  if (typeof v.budget_tokens === 'number') return { reasoning: { effort: effortForBudget(v.budget_tokens) } }
  // `adaptive` thinking (newer Claude models) has no budget: the model's default effort.
  return { reasoning: { effort: 'medium' } }
}

const outputConfigToEffort: Translate = (v) => {
  if (!isObj(v) || typeof v.effort !== 'string') return null
  const e = v.effort === 'max' ? 'xhigh' : v.effort
  return EFFORTS.includes(e as ReasoningEffort) ? { reasoning: { effort: e as ReasoningEffort } } : null
}

const stopSequencesToStop: Translate = (v) =>
  Array.isArray(v) && v.every((s) => typeof s === 'string') ? { stop: v as string[] } : null

const maxCompletionToMax: Translate = (v) => (typeof v === 'number' ? { maxTokens: v } : null)

// `true` is the default on both sides, so only `false` has something to carry.
const parallelToDisable: Translate = (v) => (v === false ? { disableParallel: true } : null)

const responseFormatToStructured: Translate = (v) => {
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

const userToUser: Translate = (v) => (typeof v === 'string' ? { user: v } : null)

// Legacy function calling is tool calling under another name.
const functionsToTools: Translate = (v) => {
  if (!Array.isArray(v)) return null
  const tools = v.filter(isObj).map((f) => ({
    name: String(f.name),
    description: typeof f.description === 'string' ? f.description : undefined,
    parameters: isObj(f.parameters) ? f.parameters : { type: 'object', properties: {} },
  }))
  return { tools }
}

const functionCallToChoice: Translate = (v) => {
  if (v === 'none') return { toolChoice: { type: 'none' } }
  if (v === 'auto') return { toolChoice: { type: 'auto' } }
  if (isObj(v) && typeof v.name === 'string') return { toolChoice: { type: 'tool', name: v.name } }
  return null
}

/**
 * Parameters foreign to a model family, whatever surface they arrive on: in reject mode
 * each is a 400; in translate mode each becomes its counterpart or is dropped.
 * Claude-family: the §8 list, plus the OpenAI-only output controls (logprobs, audio,
 * predicted outputs, web search) that an Anthropic upstream cannot honour.
 * OpenAI-family: the §8 list, plus `output_config` (Anthropic's effort knob).
 */
export const FOREIGN_PARAMS: Record<Family, Record<string, Translate>> = {
  anthropic: {
    max_completion_tokens: maxCompletionToMax,
    logit_bias: drop,
    n: drop,
    seed: drop,
    user: userToUser,
    function_call: functionCallToChoice,
    functions: functionsToTools,
    parallel_tool_calls: parallelToDisable,
    store: drop,
    response_format: responseFormatToStructured,
    frequency_penalty: drop,
    logprobs: drop,
    top_logprobs: drop,
    audio: drop,
    modalities: drop,
    prediction: drop,
    web_search_options: drop,
  },
  openai: {
    top_k: drop,
    stop_sequences: stopSequencesToStop,
    cache_control: drop,
    thinking: thinkingToEffort,
    output_config: outputConfigToEffort,
    // Anthropic-only request features with no OpenAI counterpart
    context_management: drop,
    container: drop,
    mcp_servers: drop,
    inference_geo: drop,
  },
}

/**
 * Foreign parameters that only one surface can receive: Anthropic Messages API fields the
 * chat surface does not know at all (so they are "unknown" there, not foreign).
 */
const SURFACE_FOREIGN: Partial<Record<Surface, Partial<Record<Family, Record<string, Translate>>>>> = {
  // OpenAI Responses features an Anthropic upstream has no counterpart for
  responses: { anthropic: { top_logprobs: drop, background: drop, prompt: drop } },
  messages: {
    openai: {
      speed: drop, diagnostics: drop, user_profile_id: drop, workspace_id: drop,
      billing_policy: drop, compaction: drop, fallbacks: drop, fallback_credit_token: drop, thread: drop,
    },
  },
}

/**
 * Parameters a surface defines as its own even though §8 calls them foreign to a family
 * elsewhere: the messages surface takes `parallel_tool_calls` (§4.6) and says it in
 * Anthropic's terms upstream (`disable_parallel_tool_use`); `service_tier` is Anthropic's own.
 */
const SURFACE_OWN: Partial<Record<Surface, Partial<Record<Family, ReadonlySet<string>>>>> = {
  messages: { anthropic: new Set(['parallel_tool_calls', 'service_tier']) },
  // The responses surface keeps threads itself (`store` is the gateway's), and maps
  // `mcp_servers` to OpenAI's MCP tools for OpenAI-family models.
  responses: { anthropic: new Set(['store']), openai: new Set(['mcp_servers']) },
}

/**
 * Official parameters of a surface that a family's upstream has no use for and that are
 * harmless to leave out (sampling hints, identifiers, tiers): dropped in both modes,
 * never silently — they are named in the compat header.
 */
export const IGNORED_PARAMS: Record<Family, readonly string[]> = {
  anthropic: ['presence_penalty', 'verbosity', 'safety_identifier', 'prompt_cache_retention', 'service_tier'],
  openai: [],
}

/**
 * The same, for one surface: official parameters that the other family's upstream (or the
 * gateway itself) does not take on that surface's path. `prompt_cache_key` is never forwarded
 * on chat (spec §4.4: prompt-cache scoping is the gateway's), nor to a Claude upstream.
 */
const SURFACE_IGNORED: Partial<Record<Surface, Partial<Record<Family, readonly string[]>>>> = {
  chat: { openai: ['prompt_cache_key'], anthropic: ['prompt_cache_key'] },
  messages: { openai: ['pause_on_call_tools_start', 'service_tier', 'betas'] },
  responses: { anthropic: ['prompt_cache_key', 'strict', 'client_metadata', 'include'] },
}

/**
 * Parameters a family's upstream takes only in part: carried, and named in the compat header
 * when the part left out is there. Anthropic's `metadata` holds `user_id` alone: the rest of
 * a chat client's metadata has no home upstream.
 */
const PARTLY_CARRIED: Partial<Record<Surface, Partial<Record<Family, Record<string, (v: unknown) => boolean>>>>> = {
  chat: { anthropic: { metadata: (v) => typeof v === 'object' && v !== null && Object.keys(v).some((k) => k !== 'user_id') } },
}

/** Top-level parameters each surface knows: the spec's, the official API's, and the foreign ones it rules on. */
export const SURFACE_PARAMS: Partial<Record<Surface, ReadonlySet<string>>> = {
  chat: new Set([
    // spec §4.4
    'model', 'messages', 'stream', 'temperature', 'max_tokens', 'max_completion_tokens', 'top_p', 'stop',
    'frequency_penalty', 'presence_penalty', 'response_format', 'reasoning_effort', 'tools', 'tool_choice',
    'function_call', 'functions', 'n', 'seed', 'user', 'logit_bias', 'parallel_tool_calls', 'service_tier',
    'store', 'metadata', 'stream_options', 'web_search_options', 'prompt_cache_key',
    // current official Chat Completions parameters the spec does not list
    'modalities', 'audio', 'prediction', 'verbosity', 'logprobs', 'top_logprobs', 'safety_identifier',
    'prompt_cache_retention',
    // Anthropic-style extensions honoured for Claude-family models (§8 rejects them for OpenAI-family)
    'top_k', 'stop_sequences', 'cache_control', 'thinking', 'output_config', 'context_management', 'container',
    'mcp_servers', 'inference_geo',
  ]),
  messages: new Set([
    // spec §4.6
    'model', 'messages', 'stream', 'max_tokens', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata',
    'thinking', 'cache_control', 'tools', 'tool_choice', 'parallel_tool_calls', 'pause_on_call_tools_start',
    'service_tier', 'reasoning_effort', 'betas',
    // current official Messages API parameters the spec does not list (Claude Code sends several)
    'system', 'context_management', 'output_config', 'output_format', 'container', 'mcp_servers', 'inference_geo',
    'speed', 'diagnostics', 'user_profile_id', 'workspace_id',
    // beta parameters of the current SDK (`client.beta.messages`)
    'billing_policy', 'compaction', 'fallbacks', 'fallback_credit_token', 'thread',
  ]),
  responses: new Set([
    // spec §4.5
    'model', 'input', 'messages', 'instructions', 'system', 'tools', 'tool_choice', 'temperature', 'top_p',
    'max_output_tokens', 'response_format', 'reasoning_effort', 'reasoning_summary', 'reasoning', 'mcp_servers',
    'stream', 'web_search_options', 'prompt_cache_retention', 'include', 'previous_response_id', 'tool_outputs',
    'truncation', 'max_tool_calls', 'audio', 'modalities', 'prediction', 'strict', 'verbosity', 'metadata', 'store',
    'conversation', 'n', 'seed', 'user', 'logit_bias', 'frequency_penalty', 'presence_penalty', 'functions',
    'function_call',
    // current official Responses API parameters the spec does not list (Codex sends several)
    'text', 'parallel_tool_calls', 'prompt_cache_key', 'safety_identifier', 'service_tier', 'stream_options',
    'top_logprobs', 'background', 'prompt', 'context_management', 'client_metadata',
  ]),
}

export interface RulesOutcome {
  /** Merged counterparts of translated parameters (translate mode only). */
  counterpart: Counterpart
  /** Top-level parameters to leave out of what goes upstream. */
  removed: string[]
  /** What the `x-switchyard-compat` header says: `name->target` or `name` (dropped). */
  compat: string[]
}

function targetOf(c: Counterpart): string {
  return Object.keys(c).join('+')
}

/**
 * Applies §8 to a request body for a model family. Throws a 400 listing every offending
 * parameter in reject mode; otherwise says what each foreign parameter became.
 */
export function applyFamilyRules(
  body: Record<string, unknown>,
  family: Family,
  mode: CrossFamilyMode,
  modelId: string,
  surface: Surface = 'chat',
): RulesOutcome {
  const extra = SURFACE_FOREIGN[surface]?.[family]
  const foreign = extra ? { ...FOREIGN_PARAMS[family], ...extra } : FOREIGN_PARAMS[family]
  const own = SURFACE_OWN[surface]?.[family]
  // Own properties only: a body key such as `toString` must not find Object.prototype's.
  const present = Object.keys(body).filter((k) => Object.hasOwn(foreign, k) && body[k] !== undefined && !own?.has(k))
  if (present.length > 0 && mode === 'reject') {
    const label = family === 'anthropic' ? 'Claude-family' : 'OpenAI-family'
    throw badRequest(`Parameters not supported for ${label} model ${modelId}: ${present.join(', ')}`)
  }
  const out: RulesOutcome = { counterpart: {}, removed: [], compat: [] }
  for (const name of present) {
    const c = foreign[name]!(body[name])
    out.removed.push(name)
    if (c) {
      mergeCounterpart(out.counterpart, c)
      out.compat.push(`${name}->${targetOf(c)}`)
    } else {
      out.compat.push(name)
    }
  }
  for (const name of [...IGNORED_PARAMS[family], ...(SURFACE_IGNORED[surface]?.[family] ?? [])]) {
    if (body[name] === undefined || own?.has(name)) continue
    out.removed.push(name)
    out.compat.push(name)
  }
  for (const [name, leftOut] of Object.entries(PARTLY_CARRIED[surface]?.[family] ?? {})) if (body[name] !== undefined && leftOut(body[name])) out.compat.push(name)
  return out
}

function mergeCounterpart(into: Counterpart, c: Counterpart) {
  const { reasoning, ...rest } = c
  Object.assign(into, rest)
  if (reasoning) into.reasoning = { ...into.reasoning, ...reasoning }
}

/** Parameters of a body that the surface does not know at all, in body order. */
export function unknownParams(body: Record<string, unknown>, surface: Surface): string[] {
  const known = SURFACE_PARAMS[surface]
  // A surface without a list is a wiring bug: fail loudly, never accept everything.
  if (!known) throw new Error(`no parameter list for the ${surface} surface (SURFACE_PARAMS)`)
  return Object.keys(body).filter((k) => !known.has(k))
}

/** Every surface that serves generations must have its parameter list; checked at start. */
export function assertSurfaceParams(surfaces: readonly Surface[]): void {
  for (const s of surfaces) if (!SURFACE_PARAMS[s]) throw new Error(`no parameter list for the ${s} surface (SURFACE_PARAMS)`)
}

/** The header stays well inside what any HTTP client reads (some stop at 64 KB for all headers). */
const MAX_COMPAT_HEADER = 1_000

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
