// A check of an object against OpenAI's published OpenAPI schema of it (the subset in
// test/fixtures/openai/schema, scripts/openapi-subset.ts). Typed clients (OpenAI's Go, Java and
// .NET SDKs, Rust's async-openai) decode replies by these schemas, where the JavaScript and Python
// SDKs take anything: a required field left out, or a value outside its enum, fails them.
//
// What OpenAI itself sends is the measure, so three readings are taken as its traffic has them:
// - null stands for an optional field left out (OpenAI's replies carry `usage: null`,
//   `user: null`, `status_details: null`, a batch's `completed_at: null`, …, where the
//   schema declares the field optional and not nullable);
// - a `web_search_call` item in `response.output_item.added` has no `action` yet (OpenAI adds it
//   when the search is done);
// - the specification's own values (gateway-spec.md): a Responses reply that called tools is
//   `requires_action` (event `response.requires_action`), a batch is `queued` or `processing`.
import { join } from 'node:path'
import { sseEvents } from './sse-events.ts'

type Json = any
const SCHEMAS: Record<string, Json> = await Bun.file(join(import.meta.dir, '..', 'fixtures', 'openai', 'schema', 'openapi-subset.json')).json()

/** The specification's values beside OpenAI's enums, by the path's last field. */
const SPEC_VALUES: Record<string, unknown[]> = {
  status: ['requires_action', 'queued', 'processing'],
  type: ['response.requires_action'],
}

function deref(s: Json): Json {
  while (s?.$ref) s = SCHEMAS[s.$ref.split('/').pop()]
  return s
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v)
const isA = (t: string, v: unknown) => t === typeOf(v) || (t === 'number' && typeOf(v) === 'integer')
const nullable = (s: Json) => s.nullable === true || s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null')) || (s.anyOf ?? s.oneOf ?? []).some((a: Json) => deref(a)?.type === 'null')

/** What `v` breaks of schema `s`, each a path and what is wrong there; [] when it conforms. */
export function breaksOf(s: Json, v: unknown, path = '$'): string[] {
  s = deref(s)
  if (!s) return []
  if (v === null && nullable(s)) return []
  const out: string[] = []
  for (const sub of s.allOf ?? []) out.push(...breaksOf(sub, v, path))
  const alts: Json[] | undefined = s.anyOf ?? s.oneOf
  if (alts) {
    // the alternative whose `type` constant the value names, else the one it breaks least
    let best: string[] | undefined
    for (const alt of alts) {
      const found = breaksOf(alt, v, path)
      if (found.length === 0) return out
      const named = deref(alt)?.properties?.type?.enum
      if (named && typeof v === 'object' && v !== null && named.includes((v as Json).type)) {
        best = found
        break
      }
      if (!best || found.length < best.length) best = found
    }
    const plain = alts.every((a) => !deref(a)?.properties)
    out.push(...(plain ? [`${path}: ${JSON.stringify(v)?.slice(0, 80)} is none of its ${alts.length} forms`] : best!))
  }
  const last = path.split('.').at(-1)!
  if (s.type) {
    const types: string[] = Array.isArray(s.type) ? s.type : [s.type]
    if (!types.some((t) => isA(t, v))) return [...out, `${path}: a ${typeOf(v)} (${JSON.stringify(v)?.slice(0, 60)}), not ${types.join(' or ')}`]
  }
  if (s.enum && !s.enum.includes(v) && !(SPEC_VALUES[last] ?? []).includes(v)) out.push(`${path}: ${JSON.stringify(v)} is not one of ${JSON.stringify(s.enum).slice(0, 160)}`)
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const o = v as Record<string, unknown>
    const required: string[] = s.required ?? []
    for (const k of required) if (!(k in o)) out.push(`${path}: no ${k}, which is required`)
    for (const [k, sub] of Object.entries<Json>(s.properties ?? {})) {
      if (!(k in o)) continue
      if (o[k] === null && !required.includes(k)) continue
      out.push(...breaksOf(sub, o[k], `${path}.${k}`))
    }
  }
  if (Array.isArray(v) && s.items) v.forEach((x, i) => out.push(...breaksOf(s.items, x, `${path}[${i}]`)))
  return out
}

/** What `v` breaks of the named schema (components.schemas). */
export const schemaBreaks = (name: string, v: unknown, path = '$'): string[] => {
  if (!(name in SCHEMAS)) throw new Error(`no schema ${name} in the subset (scripts/openapi-subset.ts ROOTS)`)
  return breaksOf({ $ref: `#/components/schemas/${name}` }, v, path)
}


/** A chat stream's breaks: each chunk checked as a chat completion chunk (an error frame is the spec's, not a chunk). */
export function chatStreamSchemaBreaks(text: string): string[] {
  return sseEvents(text).flatMap((e, i) => {
    if (e.data === '[DONE]') return []
    const v = JSON.parse(e.data)
    return v.error !== undefined ? [] : schemaBreaks('CreateChatCompletionStreamResponse', v, `chunk ${i}`)
  })
}

/** A Responses stream's breaks: each event checked as a stream event, its SSE name its type. */
export function responsesStreamSchemaBreaks(text: string): string[] {
  return sseEvents(text).flatMap((e, i) => {
    const v = JSON.parse(e.data)
    const at = `event ${i} (${v.type})`
    const named = e.event !== undefined && e.event !== v.type ? [`${at}: sent as event ${e.event}`] : []
    if (v.type === 'response.requires_action') return named
    const found = schemaBreaks('ResponseStreamEvent', v, at)
    // a search's item is added before its action is known, as OpenAI's own stream adds it
    const early = v.type === 'response.output_item.added' && v.item?.type === 'web_search_call'
    return [...named, ...(early ? found.filter((b) => b !== `${at}.item: no action, which is required`) : found)]
  })
}
