// End-to-end plumbing for the messages tests: the chat tests' rig (real gateway in front
// of the fake upstream) with the official `@anthropic-ai/sdk` as the client, pointed at
// /api/beta as a user would.
import Anthropic from '@anthropic-ai/sdk'
import { startRig, type Rig } from '../chat/e2e-helpers.ts'

export interface MessagesRig extends Rig {
  anthropic: Anthropic
  /** POST a raw body to a messages path (default /api/beta/v1/messages) with the rig's key. */
  postMessages(body: unknown, init?: { path?: string; headers?: Record<string, string> }): Promise<Response>
}

export async function startMessagesRig(env: Record<string, string> = {}, yaml?: string): Promise<MessagesRig> {
  const rig = await startRig(env, yaml)
  const anthropic = new Anthropic({ apiKey: rig.gw.key, baseURL: `${rig.gw.url}/api/beta`, maxRetries: 0 })
  return {
    ...rig,
    anthropic,
    postMessages: (body, init = {}) =>
      fetch(`${rig.gw.url}${init.path ?? '/api/beta/v1/messages'}`, {
        method: 'POST',
        headers: { 'x-api-key': rig.gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...init.headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
  }
}

/** The SSE frames of a messages stream as the client received them: `event:` name and parsed data. */
export function messageFrames(sse: string): { event: string | null; data: any }[] {
  return sse
    .split(/\r?\n\r?\n/)
    .filter((f) => f.includes('data:'))
    .map((f) => {
      const ev = /^event: ?(.*)$/m.exec(f)
      const data = f.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n')
      return { event: ev ? ev[1]!.trim() : null, data: JSON.parse(data) }
    })
}
