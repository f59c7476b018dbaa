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
  /** The bare Elysia proxy's route for the same client surface (JSON and stream): what issue 12's ratios divide by. */
  reference?: { call: Call; stream: Call }
}

/** The bare proxy relays each surface to the same wire upstream; the model does not matter to it. */
function bareRoutes(bare: string, key: string) {
  const alpha = bare + '/api/alpha/v1'
  const beta = bare + '/api/beta'
  return {
    chat: { call: chatCall('bare chat', alpha, key, PASS_MODEL), stream: chatCall('bare chat, stream', alpha, key, PASS_MODEL, true) },
    messages: { call: messagesCall('bare messages', beta, key, CLAUDE_MODEL), stream: messagesCall('bare messages, stream', beta, key, CLAUDE_MODEL, true) },
    responses: { call: responsesCall('bare responses', alpha, key, PASS_MODEL), stream: responsesCall('bare responses, stream', alpha, key, PASS_MODEL, true) },
  }
}

export function candidatePaths(gw: string, up: string, key: string, bare: string): Path[] {
  const chat = gw + '/api/alpha/v1'
  const beta = gw + '/api/beta'
  const ref = bareRoutes(bare, key)
  return [
    {
      name: 'pass-through',
      gateway: chatCall('gpt via chat', chat, key, PASS_MODEL),
      baseline: chatCall('openai upstream', up + '/v1', UPSTREAM_KEY, PASS_MODEL),
      stream: { gateway: chatCall('gpt via chat, stream', chat, key, PASS_MODEL, true), baseline: chatCall('openai upstream, stream', up + '/v1', UPSTREAM_KEY, PASS_MODEL, true) },
      reference: ref.chat,
    },
    {
      name: 'messages pass-through',
      gateway: messagesCall('claude via messages', beta, key, CLAUDE_MODEL),
      baseline: messagesCall('anthropic upstream', up, UPSTREAM_KEY, CLAUDE_MODEL),
      stream: { gateway: messagesCall('claude via messages, stream', beta, key, CLAUDE_MODEL, true), baseline: messagesCall('anthropic upstream, stream', up, UPSTREAM_KEY, CLAUDE_MODEL, true) },
      reference: ref.messages,
    },
    {
      name: 'messages translated',
      gateway: messagesCall('gpt via messages', beta, key, PASS_MODEL),
      baseline: chatCall('openai upstream', up + '/v1', UPSTREAM_KEY, PASS_MODEL),
      stream: { gateway: messagesCall('gpt via messages, stream', beta, key, PASS_MODEL, true), baseline: chatCall('openai upstream, stream', up + '/v1', UPSTREAM_KEY, PASS_MODEL, true) },
      reference: ref.messages,
    },
    {
      name: 'translated',
      gateway: chatCall('claude via chat', chat, key, CLAUDE_MODEL),
      baseline: messagesCall('anthropic upstream', up, UPSTREAM_KEY, CLAUDE_MODEL),
      stream: { gateway: chatCall('claude via chat, stream', chat, key, CLAUDE_MODEL, true), baseline: messagesCall('anthropic upstream, stream', up, UPSTREAM_KEY, CLAUDE_MODEL, true) },
      reference: ref.chat,
    },
    {
      // issue 10: OpenAI's Responses API relayed, with the tap completing the final object
      name: 'responses pass-through',
      gateway: responsesCall('gpt via responses', chat, key, PASS_MODEL),
      baseline: responsesCall('openai responses upstream', up + '/v1', UPSTREAM_KEY, PASS_MODEL),
      stream: { gateway: responsesCall('gpt via responses, stream', chat, key, PASS_MODEL, true), baseline: responsesCall('openai responses upstream, stream', up + '/v1', UPSTREAM_KEY, PASS_MODEL, true) },
      reference: ref.responses,
    },
    {
      // a Claude model through the IR to the messages wire, re-encoded as a Response
      name: 'responses translated',
      gateway: responsesCall('claude via responses', chat, key, CLAUDE_MODEL),
      baseline: messagesCall('anthropic upstream', up, UPSTREAM_KEY, CLAUDE_MODEL),
      stream: { gateway: responsesCall('claude via responses, stream', chat, key, CLAUDE_MODEL, true), baseline: messagesCall('anthropic upstream, stream', up, UPSTREAM_KEY, CLAUDE_MODEL, true) },
      reference: ref.responses,
    },
  ]
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
