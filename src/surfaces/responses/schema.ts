// Value rules of each top-level responses-style parameter (the gateway's, plus the current
// official Responses API), as TypeBox schemas compiled once. Nested objects allow extra
// fields: an OpenAI upstream gets the body as it is, so unknown nested fields are its call.
import { Type as T, type Static, type TSchema } from '@sinclair/typebox'

export const Str = (o: object = {}) => T.String({ errorMessage: 'expected a string', ...o })
export const NonEmpty = () => Str({ minLength: 1, errorMessage: 'expected a non-empty string' })
export const Id = () => Str({ minLength: 1, maxLength: 256, errorMessage: 'expected an id of 1 to 256 characters' })
export const Bool = () => T.Boolean({ errorMessage: 'expected a boolean (true or false)' })
export const Num = (min: number, max: number) => T.Number({ minimum: min, maximum: max, errorMessage: `expected a number from ${min} to ${max}` })
export const Int = (min: number) => T.Integer({ minimum: min, errorMessage: `expected an integer of at least ${min}` })
/** One of `values`; the checked value's static type is their union. */
export const OneOf = <const V extends string>(values: readonly V[]) => T.Union(values.map((v) => T.Literal(v)), { errorMessage: `expected one of ${values.map((v) => `"${v}"`).join(', ')}` })
export const AnyObject = T.Object({}, { additionalProperties: true, errorMessage: 'expected an object' })
export const Arr = (what: string) => T.Array(T.Unknown(), { errorMessage: `expected an array of ${what}` })

export const SUMMARIES = ['auto', 'concise', 'detailed', 'none'] as const

export const JsonSchemaFormat = T.Object(
  { type: T.Literal('json_schema'), name: NonEmpty(), schema: T.Optional(AnyObject), strict: T.Optional(T.Union([Bool(), T.Null()])), description: T.Optional(Str()) },
  { errorMessage: 'expected { type: "json_schema", name, schema?, strict? }' },
)

/** `text.format` as it passed its schema (params.ts), and what a `response_format` becomes. */
export type ResponsesFormat = { type: 'text' | 'json_object' } | Static<typeof JsonSchemaFormat>
