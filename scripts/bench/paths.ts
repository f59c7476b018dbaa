// What the bench measures: each path as a gateway call, the same request sent directly to
// the upstream, its stream, and the bare proxy's route for the same client surface.
import { chatCall, getCall, messagesCall, probe, responsesCall, type Call } from './call.ts'

export const PASS_MODEL = 'gpt-4o-mini'
const CLAUDE_MODEL = 'claude-haiku-4-5'
const UPSTREAM_KEY = 'sk-bench-upstream'

export interface Path {
  name: string
  gateway: Call
  baseline: Call
  stream?: { gateway: Call; baseline: Call }
  /** The bare Elysia proxy's route for the same client surface (JSON and stream): what the ratio targets divide by. */
  reference?: { call: Call; stream: Call }
}

export type Surface = 'chat' | 'messages' | 'responses'
type Maker = (name: string, base: string, key: string, model: string, stream?: boolean) => Call
const MAKERS: Record<Surface, Maker> = { chat: chatCall, messages: messagesCall, responses: responsesCall }

/** Where a surface's client points on a server with the gateway's routes (the gateway, the bare proxy). */
const routeBase = (surface: Surface, server: string) => server + (surface === 'messages' ? '/api/beta' : '/api/alpha/v1')

/**
 * A surface's pass-through call (the model whose upstream speaks that surface's wire) on a
 * server with the gateway's routes: what the bare proxy is measured with, and the experiments.
 */
export function surfaceCall(surface: Surface, server: string, key: string, stream = false, name = `${surface}${stream ? ', stream' : ''}`): Call {
  return MAKERS[surface](name, routeBase(surface, server), key, surface === 'messages' ? CLAUDE_MODEL : PASS_MODEL, stream)
}

/** The bare proxy relays each surface to the same wire upstream; the model does not matter to it. */
function bareRoutes(bare: string, key: string) {
  const routes = (s: Surface) => ({ call: surfaceCall(s, bare, key, false, `bare ${s}`), stream: surfaceCall(s, bare, key, true, `bare ${s}, stream`) })
  return { chat: routes('chat'), messages: routes('messages'), responses: routes('responses') }
}

/**
 * The paths as data: the client surface and model through the gateway, and the wire the same
 * request takes directly to the upstream (the wire the gateway itself calls for that model).
 */
const PATHS: { name: string; via: Surface; model: string; upstream: Surface; label: string }[] = [
  { name: 'pass-through', via: 'chat', model: PASS_MODEL, upstream: 'chat', label: 'gpt via chat' },
  { name: 'messages pass-through', via: 'messages', model: CLAUDE_MODEL, upstream: 'messages', label: 'claude via messages' },
  { name: 'messages translated', via: 'messages', model: PASS_MODEL, upstream: 'chat', label: 'gpt via messages' },
  { name: 'translated', via: 'chat', model: CLAUDE_MODEL, upstream: 'messages', label: 'claude via chat' },
  // OpenAI's Responses API relayed, with the tap completing the final object
  { name: 'responses pass-through', via: 'responses', model: PASS_MODEL, upstream: 'responses', label: 'gpt via responses' },
  // a Claude model through the IR to the messages wire, re-encoded as a Response
  { name: 'responses translated', via: 'responses', model: CLAUDE_MODEL, upstream: 'messages', label: 'claude via responses' },
]

export function candidatePaths(gw: string, up: string, key: string, bare: string): Path[] {
  const direct: Record<Surface, { base: string; label: string }> = {
    chat: { base: up + '/v1', label: 'openai upstream' },
    messages: { base: up, label: 'anthropic upstream' },
    responses: { base: up + '/v1', label: 'openai responses upstream' },
  }
  const ref = bareRoutes(bare, key)
  return PATHS.map((p) => {
    const via = MAKERS[p.via]
    const to = MAKERS[p.upstream]
    const d = direct[p.upstream]
    return {
      name: p.name,
      gateway: via(p.label, routeBase(p.via, gw), key, p.model),
      baseline: to(d.label, d.base, UPSTREAM_KEY, p.model),
      stream: { gateway: via(`${p.label}, stream`, routeBase(p.via, gw), key, p.model, true), baseline: to(`${d.label}, stream`, d.base, UPSTREAM_KEY, p.model, true) },
      reference: ref[p.via],
    }
  })
}

/** While no generation route answers: auth, rate limit and routing alone, so the harness still measures something real. */
export const fallbackPath = (gw: string, up: string, key: string): Path => ({
  name: 'auth+routing (GET /api/v1/models)',
  gateway: getCall('models list', gw + '/api/v1/models', key, '"data"'),
  baseline: getCall('upstream models', up + '/v1/models', UPSTREAM_KEY, '"data"'),
})

/** The paths whose gateway calls answer properly now; notes say why any other is left out. */
export async function workingPaths(candidates: Path[], notes: string[]): Promise<Path[]> {
  const ok: Path[] = []
  for (const p of candidates) {
    try {
      await probe(p.baseline)
      await probe(p.gateway)
    } catch (e) {
      notes.push(`${p.name} path not measured: ${(e as Error).message.split('\n')[0]}`)
      continue
    }
    if (p.reference) {
      try {
        await probe(p.reference.call)
        await probe(p.reference.stream)
      } catch (e) {
        notes.push(`${p.name}: bare proxy reference not measured: ${(e as Error).message.split('\n')[0]}`)
        p.reference = undefined
      }
    }
    if (p.stream) {
      try {
        await probe(p.stream.baseline)
        await probe(p.stream.gateway)
      } catch (e) {
        notes.push(`${p.name} stream not measured: ${(e as Error).message.split('\n')[0]}`)
        p.stream = undefined
      }
    }
    ok.push(p)
  }
  return ok
}

export const route = (c: Call) => `${c.method} ${new URL(c.url).pathname}${c.body ? ` model ${JSON.parse(c.body).model}` : ''}`

/** The candidate paths `--only` names (all without it); an unknown name is an error, not an empty run. */
export function selected(paths: Path[], only: string | undefined): Path[] {
  if (!only) return paths
  const names = only.split(',').map((n) => n.trim()).filter(Boolean)
  const unknown = names.filter((n) => !paths.some((p) => p.name === n))
  if (unknown.length) throw new Error(`--only: no path named ${unknown.map((n) => `'${n}'`).join(', ')} (paths: ${paths.map((p) => p.name).join(', ')})`)
  return paths.filter((p) => names.includes(p.name))
}
