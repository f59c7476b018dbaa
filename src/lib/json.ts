// The one test for "a JSON object" (not null, not an array), for code that reads bodies and
// replies whose shape it has not checked yet.

export type Obj = Record<string, unknown>

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
