// Shared set-up for the batch tests: the real gateway (in this process) in front of the fake
// upstream, the official `openai` and `@anthropic-ai/sdk` clients, a second key, and small
// helpers to upload JSONL, poll a batch to its end and read every results page.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI, { toFile } from 'openai'
import { fixtureJson, startFakeUpstream, type FakeUpstream, type Reply } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

export const NO_LIMITS = { SWITCHYARD_KEY_RPM: '1000000', SWITCHYARD_IP_RPM: '1000000', SWITCHYARD_KEY_BURST_RPS: '1000000' }

export interface BatchRig {
  gw: Gateway
  up: FakeUpstream
  otherKey: string
  openai(key?: string, root?: 'v1' | 'alpha/v1'): OpenAI
  anthropic(key?: string): Anthropic
  /** A fetch to the gateway with the rig's key (or `key`), JSON body. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<Response>
  /** Uploads JSONL lines (objects are serialized; strings go as they are) as a purpose=batch file. */
  upload(lines: (string | object)[], key?: string): Promise<string>
  /** Polls until the batch has ended (output files written), then returns it. */
  ended(id: string, key?: string, ms?: number): Promise<any>
  /** Every result, through the results route, `limit` at a time. */
  allResults(id: string, limit?: number, key?: string): Promise<any[]>
  stop(): Promise<void>
}

export interface RigOptions {
  env?: Record<string, string>
  yaml?: string
  /** Point both families at the fake upstream (default); false: every model is served by the mock. */
  upstream?: boolean
}

export async function startBatchRig(opts: RigOptions = {}): Promise<BatchRig> {
  const up = await startFakeUpstream()
  const upstreamEnv = opts.upstream === false ? {} : { OPENAI_API_KEY: 'sk-up-openai', OPENAI_BASE_URL: up.url, ANTHROPIC_API_KEY: 'sk-up-anthropic', ANTHROPIC_BASE_URL: up.url }
  const gw = await startGateway({ env: { ...NO_LIMITS, ...upstreamEnv, ...opts.env }, yaml: opts.yaml })
  const otherKey = (await gw.services.keys.create({ name: 'other' })).key
  const call = (method: string, path: string, body?: unknown, key = gw.key) =>
    fetch(gw.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
  const rig: BatchRig = {
    gw,
    up,
    otherKey,
    openai: (key = gw.key, root = 'v1') => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/${root}`, maxRetries: 0 }),
    anthropic: (key = gw.key) => new Anthropic({ apiKey: key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 }),
    call,
    async upload(lines, key = gw.key) {
      const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n'
      const f = await rig.openai(key).files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' })
      return f.id
    },
    async ended(id, key = gw.key, ms = 20_000) {
      const deadline = Date.now() + ms
      for (;;) {
        // the row first: its end is written with the output files, so a reply read after it
        // carries them (read before it, a cancelled batch's reply may still have none)
        const row = await gw.services.batches!.store.byId(id)
        const b = (await (await call('GET', `/api/v1/batches/${id}`, undefined, key)).json()) as any
        if (row?.endedAt) return b
        if (Date.now() > deadline) throw new Error(`batch ${id} did not end: ${JSON.stringify(b)}`)
        await Bun.sleep(15)
      }
    },
    async allResults(id, limit = 1000, key = gw.key) {
      const out: any[] = []
      for (let offset = 0; ; offset += limit) {
        const page = (await (await call('GET', `/api/v1/batches/${id}/results?offset=${offset}&limit=${limit}`, undefined, key)).json()) as any
        out.push(...page.results)
        if (offset + limit >= page.total) return out
      }
    },
    async stop() {
      await gw.stop()
      await up.stop()
    },
  }
  return rig
}

/** A chat body for the mock or the fake upstream. */
export const chat = (model: string, content: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content }], ...extra })
/** A messages body. */
export const msg = (model: string, content: string, extra: Record<string, unknown> = {}) => ({ model, max_tokens: 64, messages: [{ role: 'user', content }], ...extra })

/** Every generation record of a batch, straight from the database. */
export async function recordsOf(rig: BatchRig, batchId: string): Promise<any[]> {
  await rig.gw.services.recorder.flush()
  const rows = await rig.gw.services.storage.sql.all<any>('SELECT * FROM generations WHERE batch_id = ? ORDER BY created_at', [batchId])
  // SQLite keeps booleans as 0/1
  return rows.map((r) => ({ ...r, stream: r.stream ? 1 : 0, unpriced: r.unpriced ? 1 : 0 }))
}

/**
 * What the key still holds once its batch has ended, waited for up to a second: on PostgreSQL a
 * busy key's next holds are made ahead (cluster/ahead.ts), and one its batch did not use is given
 * back 50 ms after it was made. Zero means every hold ended; one that never ends still shows.
 */
export async function heldAfter(rig: BatchRig, keyId: string): Promise<number> {
  let held = rig.gw.services.billing.reserved(keyId)
  for (let i = 0; i < 100 && held !== 0; i++) {
    await Bun.sleep(10)
    held = rig.gw.services.billing.reserved(keyId)
  }
  return held
}

/** The last user text of an OpenAI chat or Anthropic messages request body the fake received. */
export function promptOf(body: any): string {
  if (typeof body.input === 'string') return body.input
  const last = [...(body.messages ?? body.input ?? [])].reverse().find((m: any) => m.role === 'user')
  if (!last) return ''
  return typeof last.content === 'string' ? last.content : last.content.filter((p: any) => p.type === 'text').map((p: any) => p.text).join('')
}

/**
 * Scripts the fake upstream to replay the recorded non-streaming replies (OpenAI chat and
 * Anthropic messages fixtures), each with an id of its own, after `delayMs` (or what it says as
 * each request comes, given its prompt); `special` may
 * answer a prompt otherwise (an error, say). Returns how often each prompt was sent.
 */
export function replayFixtures(up: FakeUpstream, opts: { delayMs?: number | ((prompt: string) => number); special?: (prompt: string, n: number) => Reply | undefined } = {}): Map<string, number> {
  const seen = new Map<string, number>()
  const openai = fixtureJson('openai/chat/nonstream-text.json')
  const anthropic = fixtureJson('anthropic/messages/nonstream-text.json')
  const responses = fixtureJson('openai/responses/nonstream-text.json')
  let n = 0
  up.script(async (req) => {
    const body = req.json()
    const prompt = promptOf(body)
    const count = (seen.get(prompt) ?? 0) + 1
    seen.set(prompt, count)
    const delay = typeof opts.delayMs === 'function' ? opts.delayMs(prompt) : opts.delayMs
    if (delay) await Bun.sleep(delay)
    const special = opts.special?.(prompt, count)
    if (special) return special
    n++
    if (req.path.startsWith('/v1/messages')) return { json: { ...anthropic, id: `msg_fixture_${n}` } }
    if (req.path.endsWith('/responses')) return { json: { ...responses, id: `resp_fixture_${n}` } }
    return { json: { ...openai, id: `chatcmpl-fixture-${n}` } }
  })
  return seen
}
