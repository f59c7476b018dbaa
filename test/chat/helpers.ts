// Shared by the chat unit tests: the pipeline of route.ts without HTTP (read → check →
// route → IR), so each case can assert the 400 and the field its message names.
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
import { HttpError } from '../../src/http/errors.ts'
import { resolveModel } from '../../src/routing/router.ts'
import { applyFamilyRules, type CrossFamilyMode } from '../../src/routing/params.ts'
import { PARAMS } from '../../src/surfaces/chat/params.ts'
import { toIR } from '../../src/surfaces/chat/params.ts'
import { normalizeBody, validateChat } from '../../src/surfaces/chat/validate.ts'

export const catalog = buildCatalog(loadConfig({ env: {}, cwd: '/' }))

export function decode(raw: unknown, mode: CrossFamilyMode = 'reject') {
  const body = normalizeBody(raw)
  const model = resolveModel(catalog, body.model, 'chat')
  validateChat(body, model)
  const rules = applyFamilyRules(body, PARAMS, model.family, mode, model.id)
  return { body, model, rules, ir: toIR(body, model, rules) }
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

export const user = (text = 'hi') => [{ role: 'user', content: text }]
