// The sweep's last part: the resources the specification does not serve, each a clear JSON
// 4xx, and the gateway's own generation records and usage (sdk-sweep.ts).
import OpenAI from 'openai'
import { ok, refused } from './checks.ts'
import { GPT, type Sweep } from './context.ts'

/** Resources the specification does not serve: each a clear JSON 4xx (never a 500 or an HTML page), whatever its method. */
export async function unserved({ oa, an, check }: Sweep): Promise<void> {
  const calls: [string, () => Promise<unknown>][] = [
    ['embeddings.create', () => oa.embeddings.create({ model: 'text-embedding-3-small', input: 'x' })],
    ['moderations.create', () => oa.moderations.create({ input: 'x' })],
    ['images.generate', () => oa.images.generate({ model: 'gpt-image-1', prompt: 'x' })],
    ['audio.speech.create', () => oa.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'x' })],
    ['completions.create (legacy)', () => oa.completions.create({ model: GPT, prompt: 'x' })],
    ['vectorStores.list', () => oa.vectorStores.list()],
    ['uploads.create', () => oa.uploads.create({ bytes: 1, filename: 'x.txt', mime_type: 'text/plain', purpose: 'user_data' })],
    ['containers.list', () => oa.containers.list()],
    ['fineTuning.jobs.list', () => oa.fineTuning.jobs.list()],
    ['videos.list', () => oa.videos.list()],
    ['anthropic skills.list', () => an.skills.list()],
    ['anthropic beta.skills.list', () => an.beta.skills.list()],
    ['anthropic beta.agents.list', () => an.beta.agents.list()],
    ['anthropic beta.sessions.list', () => an.beta.sessions.list()],
  ]
  for (const [name, call] of calls) await check(`${name} → clear JSON error`, () => refused(call, /./))
}

/** The generation record of a chat id, and the usage report. */
export async function recordsAndUsage({ oa, check, key, url }: Sweep): Promise<void> {
  await check('generations (by a chat id) and usage', async () => {
    const r = await oa.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'record me' }] })
    const unified = new OpenAI({ apiKey: key, baseURL: `${url}/api/v1`, maxRetries: 0 })
    let g: { success?: boolean; generation?: { id?: string } } = {}
    for (let i = 0; i < 50 && !g.success; i++) {
      g = ((await unified.get('/generations', { query: { id: r.id } }).catch(() => ({}))) as typeof g)
      if (!g.success) await Bun.sleep(100)
    }
    ok(g.success && g.generation?.id, JSON.stringify(g))
    const u = (await unified.get('/usage', { query: { timeframe: '24h' } })) as { totals?: object }
    ok(u.totals, JSON.stringify(u).slice(0, 200))
    return `${g.generation.id}`
  })
}
