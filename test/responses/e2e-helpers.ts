// End-to-end plumbing for the responses tests: the chat tests' rig (real gateway in front of
// the fake upstream, the official `openai` SDK at /api/alpha/v1) plus raw POSTs and an SSE
// reader for the responses-style events.
import { startRig, type Rig } from '../chat/e2e-helpers.ts'

export interface ResponsesRig extends Rig {
  /** POST a raw body to /api/alpha/v1/responses with the rig's key (or another). */
  postResponses(body: unknown, init?: { key?: string; headers?: Record<string, string> }): Promise<Response>
}

export async function startResponsesRig(env: Record<string, string> = {}, yaml?: string): Promise<ResponsesRig> {
  const rig = await startRig(env, yaml)
  return {
    ...rig,
    postResponses: (body, init = {}) =>
      fetch(`${rig.gw.url}/api/alpha/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${init.key ?? rig.gw.key}`, 'content-type': 'application/json', ...init.headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
  }
}

/** The frames of a responses-style SSE body (`event:` name and parsed data): the same reader as the messages tests'. */
export { messageFrames as frames } from '../messages/e2e-helpers.ts'
export type Frame = { event: string | null; data: any }

/** The event types of a stream, in order. */
export const types = (fs: Frame[]) => fs.map((f) => f.data.type as string)

export const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
}
