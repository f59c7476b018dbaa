// `pause_on_call_tools_start` (messages surface): the reply stops at the first tool call, with
// a tool-use finish, so the client runs the tool and resumes with its result. What the
// upstream had reported by then is the usage (the rest of its output is never relayed).
import { emptyUsage, type GenerationResponse, type StreamEvent, type Usage } from './types.ts'

const PAUSED = { reason: 'tool_calls', raw: 'tool_use' } as const

export async function* pauseAtFirstTool(events: AsyncIterable<StreamEvent>): AsyncGenerator<StreamEvent> {
  let usage: Usage = emptyUsage()
  for await (const ev of events) {
    if (ev.type === 'usage') usage = ev.usage
    yield ev
    if (ev.type === 'tool-input-end') return yield { type: 'finish', finish: { ...PAUSED }, usage }
  }
}

export function pauseResponseAtFirstTool(r: GenerationResponse): GenerationResponse {
  const i = r.content.findIndex((p) => p.type === 'tool-call')
  if (i < 0) return r
  return { ...r, content: r.content.slice(0, i + 1), finish: { ...PAUSED } }
}
