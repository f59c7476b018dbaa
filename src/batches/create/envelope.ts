// The create body of a batch, apart from its items: which fields each API family takes, and
// the 400 that names a wrong one. Pure; runs in the worker that reads the items.
import { badRequest } from '../../http/errors.ts'
import { typeName } from '../../routing/router.ts'
import { checkEndpoint, DEFAULT_ENDPOINT } from '../endpoints.ts'
import type { BatchFamily, Envelope } from '../types.ts'
import { isObj } from '../../lib/json.ts'

export type { Envelope }

/** What the batch row keeps of the create body. */
export interface ParsedCreate {
  envelope: Envelope
  /** The inline items, when the batch has no input file. */
  requests: unknown[] | null
}

const OPENAI_FIELDS = new Set(['input_file_id', 'requests', 'metadata', 'settings', 'endpoint', 'completion_window', 'output_expires_after'])
const ANTHROPIC_FIELDS = new Set(['requests'])
const MAX_METADATA_BYTES = 16 * 1024
const DAY = 86_400


function unknownFields(body: Record<string, unknown>, known: Set<string>) {
  const extra = Object.keys(body).filter((k) => !known.has(k))
  if (extra.length > 0) throw badRequest(`${extra.map((k) => k.slice(0, 64)).join(', ')}: unknown parameter${extra.length > 1 ? 's' : ''} for creating a batch; allowed: ${[...known].join(', ')}`)
}

function requestsOf(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw badRequest(`requests: expected an array of requests, got ${typeName(v)}`)
  if (v.length === 0) throw badRequest('requests: must hold at least one request')
  return v
}

function metadataOf(v: unknown): string | null {
  if (v === undefined || v === null) return null
  if (!isObj(v)) throw badRequest(`metadata: expected an object, got ${typeName(v)}`)
  const text = JSON.stringify(v)
  if (text.length > MAX_METADATA_BYTES) throw badRequest(`metadata: larger than ${MAX_METADATA_BYTES} bytes`)
  return text
}

function settingsOf(v: unknown): number | null {
  if (v === undefined || v === null) return null
  if (!isObj(v)) throw badRequest(`settings: expected an object, got ${typeName(v)}`)
  unknownFields(v, new Set(['concurrency']))
  const c = v.concurrency
  if (c === undefined || c === null) return null
  if (typeof c !== 'number' || !Number.isInteger(c) || c < 1) throw badRequest('settings.concurrency: expected an integer of at least 1')
  return c
}

function expiresAfterOf(v: unknown): number | null {
  if (v === undefined || v === null) return null
  if (!isObj(v)) throw badRequest(`output_expires_after: expected an object, got ${typeName(v)}`)
  unknownFields(v, new Set(['anchor', 'seconds']))
  if (v.anchor !== 'created_at') throw badRequest('output_expires_after.anchor: must be "created_at"')
  const s = v.seconds
  if (typeof s !== 'number' || !Number.isInteger(s) || s < 3600 || s > 30 * DAY) throw badRequest(`output_expires_after.seconds: expected an integer from 3600 to ${30 * DAY}`)
  return s
}

/** The OpenAI-shaped create body (`/api/v1/batches`, `/api/alpha/v1/batches`). */
export function parseOpenAICreate(body: unknown): ParsedCreate {
  if (!isObj(body)) throw badRequest(`Request body: expected a JSON object, got ${typeName(body)}`)
  unknownFields(body, OPENAI_FIELDS)
  const hasFile = body.input_file_id !== undefined && body.input_file_id !== null
  const hasRequests = body.requests !== undefined && body.requests !== null
  if (hasFile === hasRequests) throw badRequest('input_file_id, requests: give exactly one of them (a JSONL file of yours, or an inline array)')
  if (hasFile && (typeof body.input_file_id !== 'string' || body.input_file_id === '')) throw badRequest(`input_file_id: expected a file id, got ${typeName(body.input_file_id)}`)
  const window = body.completion_window ?? '24h'
  if (window !== '24h') throw badRequest(`completion_window: only "24h" is supported`)
  return {
    envelope: {
      endpoint: checkEndpoint(body.endpoint ?? DEFAULT_ENDPOINT),
      inputFileId: hasFile ? (body.input_file_id as string) : null,
      completionWindow: '24h',
      metadata: metadataOf(body.metadata),
      concurrency: settingsOf(body.settings),
      outputExpiresAfter: expiresAfterOf(body.output_expires_after),
    },
    requests: hasRequests ? requestsOf(body.requests) : null,
  }
}

/** Anthropic's Message Batches create body: `{ requests: [{ custom_id, params }] }`. */
export function parseAnthropicCreate(body: unknown): ParsedCreate {
  if (!isObj(body)) throw badRequest(`Request body: expected a JSON object, got ${typeName(body)}`)
  unknownFields(body, ANTHROPIC_FIELDS)
  if (body.requests === undefined) throw badRequest('requests: required')
  return {
    envelope: { endpoint: '/v1/messages', inputFileId: null, completionWindow: '24h', metadata: null, concurrency: null, outputExpiresAfter: null },
    requests: requestsOf(body.requests),
  }
}

export function parseCreate(family: BatchFamily, body: unknown): ParsedCreate {
  return family === 'anthropic' ? parseAnthropicCreate(body) : parseOpenAICreate(body)
}
