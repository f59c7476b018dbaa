// /admin/v1/keys: create, list, read, update, disable/enable, credit, rotate (a new secret, the old one
// kept for a grace period if asked), revoke-previous (that grace ended now); /admin/v1/cache: what the
// response cache holds, and emptying it. Guarded by SWITCHYARD_ADMIN_TOKEN; without a token the
// routes do not exist (404).
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Elysia, t } from 'elysia'
import { Int } from '../lib/int.ts'
import { roundUsd } from '../lib/usd.ts'
import { echo, HttpError } from '../http/errors.ts'
import { MAX_BODY_NODES, MAX_BODY_VALUES, parseJsonSafe, readJsonBody, withBodyText } from '../http/body.ts'
import { queryTaking } from '../http/query.ts'
import type { Services } from '../services.ts'
import type { ApiKey } from '../http/context.ts'
import { sameToken } from './viewer.ts'
import { cacheStats, clearCache } from '../cache/admin.ts'
import { MAX_CREDITS, MAX_GRACE_SECONDS, MAX_RPM } from './keys.ts'
import { checkKeyText, KEY_TEXT_MAX } from './key-text.ts'
import { keyListResponse } from './key-list.ts'

/** An account a report or listing can name again: blank ones could never be filtered on. */
const Account = t.String({ minLength: 1, maxLength: KEY_TEXT_MAX, pattern: '\\S', errorMessage: `expected 1 to ${KEY_TEXT_MAX} characters, not all of them blank` })

const Create = TypeCompiler.Compile(
  t.Object(
    {
      name: t.String({ minLength: 1, maxLength: KEY_TEXT_MAX }),
      account: t.Optional(Account),
      credits: t.Optional(t.Union([t.Number({ minimum: 0, maximum: MAX_CREDITS }), t.Null()], { errorMessage: `expected null (unlimited) or USD 0 to ${MAX_CREDITS}` })),
      rpm: t.Optional(t.Union([Int({ minimum: 1, maximum: MAX_RPM }), t.Null()], { errorMessage: `expected null (the default) or an integer 1 to ${MAX_RPM}` })),
    },
    { additionalProperties: false },
  ),
)

const Update = TypeCompiler.Compile(
  t.Object(
    {
      name: t.Optional(t.String({ minLength: 1, maxLength: KEY_TEXT_MAX })),
      account: t.Optional(Account),
      status: t.Optional(t.Union([t.Literal('active'), t.Literal('inactive')])),
      credits: t.Optional(t.Union([t.Number({ minimum: 0, maximum: MAX_CREDITS }), t.Null()], { errorMessage: `expected null (unlimited) or USD 0 to ${MAX_CREDITS}` })),
      rpm: t.Optional(t.Union([Int({ minimum: 1, maximum: MAX_RPM }), t.Null()], { errorMessage: `expected null (the default) or an integer 1 to ${MAX_RPM}` })),
    },
    { additionalProperties: false },
  ),
)

/** Rotation's body may be left out, or be `{}`: the old secret then stops working at once. */
const Rotate = TypeCompiler.Compile(
  t.Object(
    {
      grace_period_seconds: t.Optional(Int({ minimum: 0, maximum: MAX_GRACE_SECONDS, errorMessage: `expected an integer 0 to ${MAX_GRACE_SECONDS} (30 days): how long the old secret keeps working` })),
    },
    { additionalProperties: false },
  ),
)

const Credit = TypeCompiler.Compile(t.Object({ amount: t.Number({ exclusiveMinimum: 0, maximum: MAX_CREDITS, errorMessage: `expected USD above 0, at most ${MAX_CREDITS}` }) }, { additionalProperties: false }))

function check<T>(v: { Check(x: unknown): x is T; Errors(x: unknown): { First(): { path: string; message: string } | undefined } }, body: unknown): T {
  if (v.Check(body)) return body
  const e = v.Errors(body).First() as { path: string; message: string; schema?: { errorMessage?: string } } | undefined
  const field = e?.path.replace(/^\//, '').replaceAll('/', '.') || 'body'
  // a rule's own words where it has them ("Expected union value" says nothing of the range)
  throw new HttpError(400, `${field}: ${e?.schema?.errorMessage ?? e?.message ?? 'invalid'}`)
}

/** A key as the admin API, the CLI and the dashboard show it: its money rounded as it is kept (lib/usd.ts). */
export const publicKey = (k: ApiKey) => ({
  id: k.id,
  account: k.account,
  name: k.name,
  key_prefix: k.keyPrefix,
  status: k.status,
  credits: k.credits === null ? null : roundUsd(k.credits),
  spent: roundUsd(k.spent),
  rpm: k.rpm,
  created_at: k.createdAt,
  last_used_at: k.lastUsedAt,
  /** Until when (epoch seconds) the secret the last rotation replaced still works; null when it does not. */
  previous_key_expires_at: k.previousExpiresAt != null && k.previousExpiresAt > Date.now() ? Math.ceil(k.previousExpiresAt / 1000) : null,
})

export function adminRoutes(s: Pick<Services, 'config' | 'keys' | 'cache'>) {
  const token = s.config.adminToken
  const limit = s.config.limits.maxBodyBytes
  const found = (k: ApiKey | undefined, id: string) => {
    if (!k) throw new HttpError(404, `Key ${echo(id)} not found`)
    return publicKey(k)
  }
  return new Elysia({ name: 'admin' })
    .onBeforeHandle(({ request, path }) => {
      if (!path.startsWith('/admin/')) return
      if (!token) throw new HttpError(404, `No route ${request.method} ${echo(path, 200)}`)
      const m = /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '')
      if (!m || !sameToken(m[1]!, token)) throw new HttpError(401, 'Admin routes need Authorization: Bearer <SWITCHYARD_ADMIN_TOKEN>')
      // none of these routes takes a query: a filter the listing lacks would list every key unsaid
      queryTaking(request, { what: 'an admin route', names: [] })
    })
    .get('/admin/v1/keys', () => keyListResponse(s.keys, publicKey))
    .post('/admin/v1/keys', async ({ request, set }) => {
      const body = check(Create, await readJsonBody(request, limit))
      checkKeyText(body)
      const { key, record } = await s.keys.create(body)
      set.status = 201
      return { ...publicKey(record), key }
    }, { parse: 'none' })
    .get('/admin/v1/keys/:id', async ({ params }) => found(await s.keys.get(params.id), params.id))
    .patch('/admin/v1/keys/:id', async ({ request, params }) => {
      const body = check(Update, await readJsonBody(request, limit))
      checkKeyText(body)
      return found(await s.keys.update(params.id, body), params.id)
    }, { parse: 'none' })
    .post('/admin/v1/keys/:id/disable', async ({ params }) => found(await s.keys.update(params.id, { status: 'inactive' }), params.id))
    .post('/admin/v1/keys/:id/enable', async ({ params }) => found(await s.keys.update(params.id, { status: 'active' }), params.id))
    .post('/admin/v1/keys/:id/credit', async ({ request, params }) => {
      const body = check(Credit, await readJsonBody(request, limit))
      return found(await s.keys.credit(params.id, body.amount), params.id)
    }, { parse: 'none' })
    .post('/admin/v1/keys/:id/rotate', async ({ request, params }) => {
      const body = check(Rotate, await withBodyText(request, limit, (text) => (text.trim() === '' ? {} : parseJsonSafe(text, 'JSON body', MAX_BODY_NODES, MAX_BODY_VALUES))))
      const made = await s.keys.rotate(params.id, (body.grace_period_seconds ?? 0) * 1000)
      if (!made) throw new HttpError(404, `Key ${echo(params.id)} not found`)
      // as creation answers: the new secret, shown this once
      return { ...publicKey(made.record), key: made.key }
    }, { parse: 'none' })
    .post('/admin/v1/keys/:id/revoke-previous', async ({ params }) => found(await s.keys.revokePrevious(params.id), params.id))
    .delete('/admin/v1/keys/:id', async ({ params }) => found(await s.keys.update(params.id, { status: 'inactive' }), params.id))
    .get('/admin/v1/cache', () => cacheStats(s.cache))
    .delete('/admin/v1/cache', () => clearCache(s.cache))
}
