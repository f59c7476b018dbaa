// Request options that OpenAI's chat and responses APIs share, as their value rules. The values
// inside them (moderation modes, cache lifetimes) are OpenAI's to grow, so any string passes
// here and OpenAI's own 400 comes back for one it does not know.
import { Type as T } from '@sinclair/typebox'
import { badRequest } from '../http/errors.ts'
import type { GenerationRequest, Part } from '../ir/types.ts'
import { isObj } from '../lib/json.ts'
import { typeName } from '../routing/router.ts'
import type { IRContext } from '../routing/params.ts'
import type { CatalogModel } from '../config/catalog.ts'
import { carry } from '../routing/to-ir.ts'

const Str = () => T.String({ errorMessage: 'expected a string' })
const Obj = T.Object({}, { additionalProperties: true, errorMessage: 'expected an object' })

/** `moderation`: `{ model, policy?: { input?: { mode }, output?: { mode } } }`, or null. */
export const Moderation = T.Union(
  [T.Object({ model: T.String({ minLength: 1, errorMessage: 'expected a non-empty string' }), policy: T.Optional(T.Union([Obj, T.Null()])) }), T.Null()],
  { errorMessage: 'expected { model, policy? } or null' },
)

/** `prompt_cache_options`: `{ mode?, ttl?, prewarm?, comparison_response_id? }`. */
export const PromptCacheOptions = T.Object(
  {
    mode: T.Optional(Str()),
    ttl: T.Optional(Str()),
    prewarm: T.Optional(T.Boolean({ errorMessage: 'expected a boolean (true or false)' })),
    comparison_response_id: T.Optional(T.Union([Str(), T.Null()], { errorMessage: 'expected a string or null' })),
  },
  { errorMessage: 'expected an object { mode?, ttl?, prewarm?, comparison_response_id? }' },
)

/** `access_programs` (responses): `{ cyber? }`. */
export const AccessPrograms = T.Object({ cyber: T.Optional(Str()) }, { errorMessage: 'expected an object { cyber? }' })

/** `image` (responses): request-level image options, `{ context_compression? }`. */
export const ImageOptions = T.Object({ context_compression: T.Optional(Str()) }, { errorMessage: 'expected an object { context_compression? }' })

/** What a translated breakpoint becomes: one object, so that it is told apart from a client's own cache_control. */
const BREAKPOINT = Object.freeze({ type: 'ephemeral' as const })
/** Anthropic takes at most 4 cache breakpoints in a request, tools, system and messages together. */
const MAX_BREAKPOINTS = 4

/**
 * A content part's `prompt_cache_breakpoint` (`{ mode: "explicit", ttl? }`) as Anthropic's
 * `cache_control` for a Claude model: Anthropic's default entry, kept 5 minutes from its last
 * read, which a conversation in use keeps warm. OpenAI's `ttl` (a least lifetime of 30 min or
 * 12 h) has no faithful counterpart: Anthropic's 1-hour entries cost twice the write, and must
 * come before every 5-minute one. Not an object: undefined (OpenAI judges it; nothing to translate).
 */
export function breakpointCache(bp: unknown): typeof BREAKPOINT | undefined {
  return typeof bp === 'object' && bp !== null && !Array.isArray(bp) ? BREAKPOINT : undefined
}

/**
 * OpenAI keeps breakpoints on earlier turns (it reads up to 80 of them); Anthropic refuses a
 * request with more than 4. The latest translated ones stay, in the room the client's own
 * cache_control leaves; earlier ones are let go.
 */
export function keepLastBreakpoints<R extends GenerationRequest>(req: R): R {
  const translated: { cacheControl?: unknown }[] = []
  let own = 0
  const visit = (p: { cacheControl?: unknown }) => {
    if (p.cacheControl === BREAKPOINT) translated.push(p)
    else if (p.cacheControl !== undefined) own++
  }
  const visitParts = (parts: readonly Part[]) => {
    for (const p of parts) {
      if (p.type === 'tool-call' || p.type === 'reasoning' || p.type === 'web-search') continue
      visit(p)
      if (p.type === 'tool-result' && Array.isArray(p.content)) visitParts(p.content)
    }
  }
  for (const t of req.tools ?? []) visit(t)
  visitParts(req.system ?? [])
  for (const m of req.messages) visitParts(m.content)
  const over = translated.length - Math.max(0, MAX_BREAKPOINTS - own)
  for (const p of translated.slice(0, Math.max(0, over))) delete p.cacheControl
  return req
}

/**
 * `safety_identifier`, the end user's stable id that OpenAI reads for abuse detection (it
 * supersedes `user`): a Claude model's counterpart is `metadata.user_id`, said for the same
 * purpose, so it goes there (the IR's `user`; a `user` the client also sent wins). An OpenAI
 * upstream gets it as it came.
 */
export function safetyIdentifierToIR(v: string, req: GenerationRequest, cx: IRContext): void {
  if (cx.model.family === 'anthropic') req.user ??= v
  else carry(req, 'openai', 'safety_identifier', v)
}

/** The longest end-user id OpenAI takes: `user` over 64 characters is its 400, and OpenAI-compatible upstreams hold `safety_identifier` to the same. */
const END_USER_MAX = 64

/**
 * Anthropic's `metadata.user_id` for a GPT model: the end user's id said for abuse detection,
 * which is what OpenAI's `safety_identifier` is (`user`, deprecated, is also a cache-bucketing
 * hint). Claude Code sends a JSON text of about 150 characters; one over the limit goes as its
 * SHA-256 in hex (64 characters): opaque, as both providers ask, and the same for the same id.
 */
export function userIdToSafetyIdentifier(userId: string, req: GenerationRequest): void {
  const id = userId.length <= END_USER_MAX ? userId : new Bun.CryptoHasher('sha256').update(userId).digest('hex')
  carry(req, 'openai', 'safety_identifier', id)
}

const LOCATION_FIELDS = ['city', 'region', 'country', 'timezone'] as const

/** An approximate location as Claude's web search takes it (the string fields OpenAI's has too), or undefined when it has none. */
export function approximateLocation(loc: unknown): Record<string, string> | undefined {
  if (typeof loc !== 'object' || loc === null) return undefined
  const at: Record<string, string> = {}
  for (const k of LOCATION_FIELDS) {
    const v = (loc as Record<string, unknown>)[k]
    if (typeof v === 'string') at[k] = v
  }
  return Object.keys(at).length > 0 ? at : undefined
}

/**
 * An approximate location in OpenAI's web search settings, checked as OpenAI checks one (its
 * values are where the search looks from, so one of the wrong type is a 400 naming it, never a
 * search from nowhere): an object or null, of type "approximate", its place fields strings or
 * null, in it (Responses) or in its `approximate` object (chat: `nested`).
 */
export function checkLocation(loc: unknown, at: string, nested = false): void {
  if (loc === undefined || loc === null) return
  if (!isObj(loc)) throw badRequest(`${at}: expected an object or null, got ${typeName(loc)}`)
  if (loc.type !== undefined && loc.type !== 'approximate') throw badRequest(`${at}.type: expected "approximate", got ${JSON.stringify(loc.type)?.slice(0, 40)}`)
  const [place, placeAt] = nested ? [loc.approximate, `${at}.approximate`] : [loc, at]
  if (place === undefined) return
  if (!isObj(place)) throw badRequest(`${placeAt}: expected an object, got ${typeName(place)}`)
  for (const k of LOCATION_FIELDS) {
    const v = place[k]
    if (v !== undefined && v !== null && typeof v !== 'string') throw badRequest(`${placeAt}.${k}: expected a string or null, got ${typeName(v)}`)
  }
}

/** How much context a search brings: a string (OpenAI's to grow) or null. */
export function checkContextSize(v: unknown, at: string): void {
  if (v !== undefined && v !== null && typeof v !== 'string') throw badRequest(`${at}: expected "low", "medium" or "high", got ${typeName(v)}`)
}

/**
 * A web search the gateway runs through the IR for this model: Claude's web search tool for a
 * Claude model, the mock's search (`mock: search`) for any model the mock serves; for a GPT
 * model of OpenAI's, OpenAI's own (passed through).
 */
export const searchesThroughIR = (m: Pick<CatalogModel, 'family' | 'provider'>): boolean => m.family === 'anthropic' || m.provider === 'mock'

/**
 * Chat's `web_search_options`: a search model's own for a GPT model; for a Claude model, Claude's
 * web search tool, which searches as OpenAI's search models do (and cites what it found: the
 * sources come back as url_citation annotations). Its approximate location has the same meaning
 * there; how much context a search brings (`search_context_size`) has no counterpart: named.
 */
export function webSearchOptionsToIR(v: Record<string, unknown>, req: GenerationRequest, cx: IRContext): void {
  checkContextSize(v.search_context_size, 'web_search_options.search_context_size')
  checkLocation(v.user_location, 'web_search_options.user_location', true)
  if (!searchesThroughIR(cx.model)) return carry(req, 'openai', 'web_search_options', v)
  const loc = v.user_location
  const at = approximateLocation(typeof loc === 'object' && loc !== null ? (loc as Record<string, unknown>).approximate : undefined)
  req.webSearch = at ? { userLocation: at } : {}
  if (v.search_context_size !== undefined) cx.compat.push('web_search_options.search_context_size')
}
