// Shared by the messages codec unit tests: the surface's steps without HTTP (normalize →
// resolve model → check → family rules → IR), so each case can assert the 400 and the
// field its message names.
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
import { HttpError } from '../../src/http/errors.ts'
import { resolveModel } from '../../src/routing/router.ts'
import { applyFamilyRules, type CrossFamilyMode } from '../../src/routing/rules.ts'
import { messagesToIR } from '../../src/surfaces/messages/decode.ts'
import { normalizeMessagesBody, validateMessages } from '../../src/surfaces/messages/validate.ts'

export const catalog = buildCatalog(loadConfig({ env: {}, cwd: '/' }))

export function decode(raw: unknown, mode: CrossFamilyMode = 'reject') {
  const body = normalizeMessagesBody(raw)
  const model = resolveModel(catalog, body.model, 'messages')
  validateMessages(body, model)
  const rules = applyFamilyRules(body, model.family, mode, model.id, 'messages')
  return { body, model, rules, ir: messagesToIR(body, model, rules) }
}

/** The 400 message `raw` gets; fails the test when it is accepted or not a 400. */
export function rejection(raw: unknown, mode: CrossFamilyMode = 'reject'): string {
  try {
    decode(raw, mode)
  } catch (e) {
    if (e instanceof HttpError && e.status === 400) return e.message
    throw e
  }
  throw new Error(`accepted: ${JSON.stringify(raw).slice(0, 200)}`)
}

export const CLAUDE = 'claude-sonnet-4-5'
export const GPT = 'gpt-4o'

/** A minimal valid body for `model`, with `over` merged in. */
export function body(over: Record<string, unknown> = {}, model = CLAUDE): Record<string, unknown> {
  return { model, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }], ...over }
}
