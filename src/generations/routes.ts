// Generation lookup (spec §4.7): only the key that made a generation can read it. `id` is
// either the id the client saw in the reply or the gateway's own `gen-…` id; a reply id that
// an upstream reused for several of this key's requests finds the latest.
import { Elysia } from 'elysia'
import { keyOf } from '../auth/context.ts'
import { HttpError } from '../http/errors.ts'
import type { Services } from '../services.ts'
import { toWire } from './row.ts'

/** Ids are echoed in 404 messages; a hostile one is cut short. */
const ECHO_MAX = 200

export function generationRoutes(s: Services) {
  return new Elysia({ name: 'generations' })
    .get('/api/v1/generations', async ({ request }) => {
      const id = new URL(request.url).searchParams.get('id')
      if (id === null || id === '') throw new HttpError(400, 'id: query parameter is required (the generation id)')
      const key = keyOf(request)
      // a stream that just ended early is still being billed: its record is a few ms away
      await s.recorder.settled()
      const row = await s.recorder.get(id, key.id)
      // another key's record is reported exactly like a missing one, so ids cannot be probed
      if (!row || row.apiKeyId !== key.id) throw new HttpError(404, `generation not found: ${id.slice(0, ECHO_MAX)}`)
      return { success: true, generation: toWire(row) }
    })
    .get('/api/v1/generation', ({ request }) => {
      const search = new URL(request.url).search
      return new Response(null, { status: 307, headers: { location: `/api/v1/generations${search}` } })
    })
}
