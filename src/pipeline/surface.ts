// What a surface is, to the pipeline: a decoder. `decode` checks a raw body once and returns
// the request's plan, everything the pipeline needs and nothing it must ask the surface for
// again; generate() then runs admission, the provider call, relay or encode, and the record,
// and never calls back into the surface except through the plan it was given.
import type { Catalog, CatalogModel, Surface } from '../config/catalog.ts'
import type { GenerationRequest, Usage } from '../ir/types.ts'
import type { BeyondPrompt } from '../billing/server-tools.ts'
import type { PromptWrites } from '../billing/prompt-writes.ts'
import type { Premiums } from '../config/claude-premiums.ts'
import type { TapOptions, Wire } from '../routing/contract.ts'
import type { CrossFamilyMode, ParamTable, RulesOutcome } from '../routing/params.ts'
import { applyFamilyRules } from '../routing/params.ts'
import { resolveModel } from '../routing/router.ts'
import type { MediaDeps } from '../media/source.ts'
import type { SurfaceCodec } from './codec.ts'
import type { NamedContainer } from '../containers/check.ts'
import type { RequestContext } from './context.ts'

type Body = Record<string, unknown>

export interface PassthroughPlan {
  body: Body
  tap?: TapOptions
  /** The body with the gateway's file ids (and guarded URLs) inlined, in the wire's own places. */
  resolveMedia?(deps: MediaDeps): Promise<Body>
}

/** One request, decoded once. */
export interface Plan {
  model: CatalogModel
  /** The checked body: only the surface's parameters. */
  body: Body
  stream: boolean
  /** What the x-switchyard-compat header names; building the IR or the pass-through body may add to it. */
  compat: string[]
  /** Writes the IR's answer in the surface's wire, for this request. */
  encoder: SurfaceCodec
  /** The most output one answer can be billed for, for admission: the cap the upstream is sent (undefined: the model's default). */
  maxOutputTokens: number | undefined
  /** How many answers the request asks for, each up to that cap (chat's `n`). */
  choices?: number
  /** The processing tier it is held at (OpenAI's priority costs more than standard). */
  serviceTier?: Usage['serviceTier']
  /** Anthropic's modes priced apart that it is held at (fast mode, US-only inference): a Claude model's. */
  premiums?: Premiums
  /** What it may be billed for beyond its prompt and output cap: searches its server tools run, audio output. */
  beyond?: BeyondPrompt
  /** The prompt's upper bound in tokens (its body and what the surface loaded for it, a thread's history). */
  promptTokens(): number
  /** The dearest price its breakpoints let the prompt be billed at (read in the same walk as promptTokens). */
  promptWrites(): PromptWrites
  /** What the prompt is read from where it is not the body alone (a thread's history it loaded): the files they name are held for too. */
  prompt?: unknown[]
  /** The code-execution containers the request names by id: each must be one a reply gave its key (containers/check.ts). */
  containers?: NamedContainer[]
  /** Stop the reply at the first tool call. */
  pauseAtTool: boolean
  /** The request in IR terms (the translated path). */
  ir(): GenerationRequest
  /**
   * The body for an upstream that speaks the surface's wire, or undefined when it must be
   * translated. `to`: the model it goes to, the plan's own or a fallback of its family, for
   * which the client's parameters are fitted (routing/fallback-fit.ts).
   */
  passthrough(to: CatalogModel): PassthroughPlan | undefined
}

/** What a surface is, to the pipeline. */
export interface SurfaceSpec {
  surface: Surface
  /** Every parameter the surface knows, and what each becomes per family. */
  params: ParamTable
  /** The wire this surface speaks: an upstream that speaks it too gets the body as is. */
  wire: Wire
  /** Raw JSON → the request's plan; any fault is a 400 naming the field. */
  decode(raw: unknown, cx: DecodeContext): Plan | Promise<Plan>
}

/** What decoding needs from the gateway: the catalog, the cross-family mode and the request's context. */
export interface DecodeContext {
  rc: RequestContext
  /** The catalog entry a surface may serve for `id` (a 400 or 404 naming the model otherwise). */
  model(id: unknown, surface: Surface): CatalogModel
  /** What each parameter of the body becomes for the model's family (a 400 in reject mode). */
  rules(body: Body, table: ParamTable, model: CatalogModel): RulesOutcome
  crossFamily: CrossFamilyMode
}

export function decodeContext(catalog: Catalog, crossFamily: CrossFamilyMode, rc: RequestContext): DecodeContext {
  return new RequestDecodeContext(catalog, crossFamily, rc)
}

/** A class, so that a request's context is one object (its methods are shared). */
class RequestDecodeContext implements DecodeContext {
  constructor(
    private readonly catalog: Catalog,
    readonly crossFamily: CrossFamilyMode,
    readonly rc: RequestContext,
  ) {}

  model(id: unknown, surface: Surface): CatalogModel {
    const model = resolveModel(this.catalog, id, surface)
    if (this.rc.accessLog) this.rc.accessLog.model = model.id
    return model
  }

  rules(body: Body, table: ParamTable, model: CatalogModel): RulesOutcome {
    return applyFamilyRules(body, table, model.family, this.crossFamily, model.id)
  }
}

/** The part of a plan every surface fills the same way, from its checked body and family rules. */
export function planBase(body: Body, model: CatalogModel, rules: RulesOutcome): Pick<Plan, 'model' | 'body' | 'stream' | 'compat'> {
  return { model, body, stream: body.stream === true, compat: rules.compat }
}

/** Media and file references resolved before the call (files with the caller's key, guarded URLs). */
export interface MediaResolver {
  ir(req: GenerationRequest, rc: RequestContext, model: CatalogModel): Promise<GenerationRequest>
  passthrough(plan: PassthroughPlan, rc: RequestContext): Promise<Body>
}

export const NO_MEDIA: MediaResolver = { ir: async (r) => r, passthrough: async (p) => p.body }
