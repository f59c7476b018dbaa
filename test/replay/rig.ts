// What the cassette tests share: two fake upstreams (OpenAI and Anthropic) answering with
// the recorded fixtures by what they are asked (a stream or not, tools or a tool's result), a
// gateway configured with secrets to look for in the cassettes, and official SDK clients
// whose raw bodies are kept beside what they parse.
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fixture, type FakeUpstream, type RecordedRequest, type Reply } from '../helpers/fake-upstream.ts'
import { startGateway, type Gateway } from '../helpers/server.ts'

/** Every secret a gateway of these tests is configured with (none may reach a cassette). */
export const SECRETS = {
  openai: 'sk-proj-cassetteOpenAIKey0001abcdefghijklmnop',
  openai2: 'sk-proj-cassetteOpenAIKey0002abcdefghijklmnop',
  anthropic: 'sk-ant-api03-cassetteAnthropicKey0003abcdefgh',
  admin: 'admin-token-cassette-tests-0004',
}

const delay = { delayMs: 3 }

/** The OpenAI upstream: chat (a tool call until a tool's result is sent back) and responses. */
export function openaiReply(r: RecordedRequest): Reply {
  const b = r.json()
  if (r.path.endsWith('/responses')) return b.stream ? { sse: fixture('openai/responses/stream-text.sse'), ...delay } : { json: fixture('openai/responses/nonstream-text.json') }
  const toolTurn = Array.isArray(b.tools) && !b.messages.some((m: { role: string }) => m.role === 'tool')
  if (b.stream) return { sse: fixture(toolTurn ? 'openai/chat/stream-tool-call-single.sse' : 'openai/chat/stream-text-include-usage.sse'), ...delay }
  return { json: fixture(toolTurn ? 'openai/chat/nonstream-tool-calls.json' : 'openai/chat/nonstream-text.json') }
}

/** The Anthropic upstream: messages (a tool use until a tool_result is sent back). */
export function anthropicReply(r: RecordedRequest): Reply {
  const b = r.json()
  const sent = JSON.stringify(b.messages)
  const toolTurn = Array.isArray(b.tools) && !sent.includes('"tool_result"')
  if (b.stream) return { sse: fixture(toolTurn ? 'anthropic/messages/stream-tool-use.sse' : 'anthropic/messages/stream-text.sse'), ...delay }
  return { json: fixture(toolTurn ? 'anthropic/messages/nonstream-tool-use-sdk.json' : 'anthropic/messages/nonstream-text.json') }
}

/** The config of a gateway on the two upstreams; `keys: false` gives the providers none (a replay in CI). */
export function yamlFor(o: { openai: string; anthropic: string; replay: string; keys?: boolean }): string {
  const keys = o.keys ?? true
  return `
providers:
  - { id: openai, kind: openai, base_url: ${o.openai}/v1, ${keys ? `api_keys: [${SECRETS.openai}, ${SECRETS.openai2}], ` : ''}max_retries: 0 }
  - { id: anthropic, kind: anthropic, base_url: ${o.anthropic}, ${keys ? `api_key: ${SECRETS.anthropic}, ` : ''}max_retries: 0 }
compat: { cross_family: translate }
limits: { key_rpm: 100000, ip_rpm: 100000, key_burst_rps: 10000 }
replay:
${o.replay}
`
}

export function gatewayOn(upstreams: { openai: FakeUpstream; anthropic: FakeUpstream }, replay: string, o: { keys?: boolean; env?: Record<string, string> } = {}): Promise<Gateway> {
  return startGateway({
    env: { SWITCHYARD_ADMIN_TOKEN: SECRETS.admin, ...o.env },
    yaml: yamlFor({ openai: upstreams.openai.url, anthropic: upstreams.anthropic.url, replay, keys: o.keys }),
  })
}

/** The raw bodies the SDKs received, in the order their requests were made. */
export class RawBodies {
  private readonly pending: Promise<string>[] = []

  /** A fetch for an SDK that keeps each response's text while the SDK reads it. */
  readonly fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await fetch(input, init)
    if (!res.body) {
      this.pending.push(Promise.resolve(''))
      return res
    }
    const [mine, theirs] = res.body.tee()
    this.pending.push(new Response(mine).text())
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers })
  }) as typeof fetch

  all(): Promise<string[]> {
    return Promise.all(this.pending)
  }
}

export function clients(gw: Gateway, raw: RawBodies, headers: Record<string, string> = {}) {
  return {
    openai: new OpenAI({ baseURL: `${gw.url}/api/alpha/v1`, apiKey: gw.key, maxRetries: 0, fetch: raw.fetch, defaultHeaders: headers }),
    anthropic: new Anthropic({ baseURL: `${gw.url}/api/beta`, apiKey: gw.key, maxRetries: 0, fetch: raw.fetch, defaultHeaders: headers }),
  }
}

/** Every file under a directory, recursively (the cassettes and their blobs). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? filesUnder(p) : [p]
  })
}

/** The entries of one cassette file. */
export function cassetteLines(path: string): Record<string, any>[] {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
}

/** The latest generation record of a reply id. */
export async function recordOf(gw: Gateway, id: string): Promise<Record<string, any>> {
  const res = await fetch(`${gw.url}/api/v1/generations?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${gw.key}` } })
  if (res.status !== 200) throw new Error(`no record of ${id}: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { generation: Record<string, any> }).generation
}
