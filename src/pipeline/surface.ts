// What a surface is, to the pipeline: the contract each surface (chat, messages, responses)
// fulfils and generate() runs, and the media resolver it calls before going upstream.
import type { CatalogModel, Surface } from '../config/catalog.ts'
import type { GenerationRequest } from '../ir/types.ts'
import type { TapOptions, Wire } from '../routing/contract.ts'
import type { ParamTable, RulesOutcome } from '../routing/params.ts'
import type { SurfaceCodec } from './codec.ts'
import type { RequestContext } from './context.ts'

type Body = Record<string, unknown>

export interface PassthroughPlan {
  body: Body
  tap?: TapOptions
}

/** What a surface is, to the pipeline. */
export interface SurfaceSpec {
  surface: Surface
  /** Every parameter the surface knows, and what each becomes per family. */
  params: ParamTable
  /** The wire this surface speaks: an upstream that speaks it too gets the body as is. */
  wire: Wire
  codec: SurfaceCodec
  /** Raw JSON → a body with only known parameters (unknown ones are a 400 naming them). */
  normalize(raw: unknown): Body
  /** Every value rule of the surface, for a body whose model is known (and the client's beta tokens). */
  validate(body: Body, model: CatalogModel, rc: RequestContext): void | Promise<void>
  toIR(body: Body, model: CatalogModel, rules: RulesOutcome): GenerationRequest
  /** The body to send upstream as is (pass-through), or undefined when it must be translated. */
  passthrough(body: Body, rules: RulesOutcome, model: CatalogModel, rc: RequestContext): PassthroughPlan | undefined
  /** A codec made for this one request (responses: it stores the thread), else `codec` serves. */
  codecFor?(body: Body, model: CatalogModel, rc: RequestContext): SurfaceCodec
  /** Prompt the request carries beyond its body (a thread's history), for the admission's bound. */
  promptExtra?(body: Body): unknown
  /** The request's output cap, for admission (undefined: the model's default). */
  maxOutputTokens(body: Body): number | undefined
  /** Stop the reply at the first tool call. */
  pauseAtTool?(body: Body): boolean
}

/** Media and file references resolved before the call (files with the caller's key, guarded URLs). */
export interface MediaResolver {
  ir(req: GenerationRequest, rc: RequestContext, model: CatalogModel): Promise<GenerationRequest>
  passthrough(wire: Wire, body: Body, rc: RequestContext): Promise<Body>
}

export const NO_MEDIA: MediaResolver = { ir: async (r) => r, passthrough: async (_w, b) => b }
