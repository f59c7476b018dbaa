// Request options that OpenAI's chat and responses APIs share, as their value rules. The values
// inside them (moderation modes, cache lifetimes) are OpenAI's to grow, so any string passes
// here and OpenAI's own 400 comes back for one it does not know.
import { Type as T } from '@sinclair/typebox'

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
    comparison_response_id: T.Optional(T.Union([Str(), T.Null()])),
  },
  { errorMessage: 'expected an object { mode?, ttl?, prewarm?, comparison_response_id? }' },
)

/** `access_programs` (responses): `{ cyber? }`. */
export const AccessPrograms = T.Object({ cyber: T.Optional(Str()) }, { errorMessage: 'expected an object { cyber? }' })

/** `image` (responses): request-level image options, `{ context_compression? }`. */
export const ImageOptions = T.Object({ context_compression: T.Optional(Str()) }, { errorMessage: 'expected an object { context_compression? }' })
