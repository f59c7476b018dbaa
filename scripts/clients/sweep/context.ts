// What every part of the sweep is given: the two clients on the gateway, its key and address,
// and `check` (a PASS/FAIL line); and the models and request pieces the parts share (sdk-sweep.ts).
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'

export interface Sweep {
  /** The openai client at the gateway's /api/alpha/v1. */
  oa: OpenAI
  /** The Anthropic client at the gateway's /api/beta. */
  an: Anthropic
  /** The gateway's key, for the clients a part makes of its own (the unified roots). */
  key: string
  /** The gateway's address. */
  url: string
  check(name: string, f: () => Promise<string>): Promise<void>
}

export const GPT = 'mock-gpt'
export const CLAUDE = 'mock-claude'
export const MODELS = [GPT, CLAUDE]

export const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } }]
export const schema = { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' } }, required: ['name', 'n'], additionalProperties: false }
