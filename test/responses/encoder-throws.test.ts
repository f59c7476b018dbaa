// An encoder that throws in the middle of an event (here the Responses encoder whose thread store
// fails as the reply ends): the translated stream ends with the failure events, and the
// sequence numbers the client reads still run 0, 1, 2, … with no number skipped. No upstream
// reply makes the encoder throw, so the pipeline is driven here with a scripted adapter.
import { describe, expect, test } from 'bun:test'
import type { GenerationRequest, StreamEvent } from '../../src/ir/types.ts'
import type { SurfaceCodec } from '../../src/pipeline/codec.ts'
import { GenerationOutcome } from '../../src/pipeline/outcome.ts'
import { translatedStream } from '../../src/pipeline/translated.ts'
import { createResponsesStreamEncoder, type ResponsesStreamEncoder } from '../../src/surfaces/responses/stream.ts'
import type { Turn } from '../../src/surfaces/responses/validate.ts'
import { frames, types } from './e2e-helpers.ts'

const usage = { inputTokens: 5, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 }
const turn: Turn = { items: [], history: [], tools: [], store: true, stateful: false }

/** The frames a translated Responses stream writes for `events`, its encoder's thread store throwing. */
async function streamed(events: StreamEvent[]) {
  let enc!: ResponsesStreamEncoder
  const codec: SurfaceCodec = {
    endpoint: 'openai.responses',
    fallbackId: () => 'resp_t',
    encodeJson: () => {
      throw new Error('not used')
    },
    streamEncoder: (o) =>
      (enc = createResponsesStreamEncoder({ id: o.id, model: o.model, createdAt: 1, turn, body: {} }, new Set(), () => {
        throw new Error('the thread store failed')
      })),
    errorFrame: (e) => enc.failure(e),
  }
  const adapter = {
    async stream() {
      return (async function* () {
        yield* events
      })()
    },
  }
  const ir: GenerationRequest = { model: 'm', messages: [], stream: true }
  const out = new GenerationOutcome(undefined, { apiKey: { id: 'k' } as never, model: { id: 'm' } as never, stream: true, endpoint: 'openai.responses', fallbackId: () => 'resp_t' })
  const ctx = { signal: new AbortController().signal, model: { family: 'anthropic', provider: 'anthropic' } } as never
  const res = await translatedStream({ adapter: adapter as never, ir, codec, ctx, out, headers: {}, sse: { errorFrame: codec.errorFrame } })
  return frames(await res.text())
}

const start: StreamEvent = { type: 'start', id: 'x', model: 'm', created: 1, usage }

describe('an encoder that throws mid-event', () => {
  test('the store failing at the finish: the failure events number on from the last frame sent, none skipped', async () => {
    const fs = await streamed([start, { type: 'text-delta', text: 'hello' }, { type: 'finish', finish: { reason: 'stop' }, usage }])
    expect(types(fs).slice(-3)).toEqual(['response.error', 'response.failed', 'response.completed'])
    expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => i))
    // the text ended before the finish: its done events go out, once, before the failure's
    expect(types(fs).slice(-6)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.error', 'response.failed', 'response.completed'])
    expect(fs.at(-4)!.data.item).toMatchObject({ type: 'message', status: 'completed', content: [{ text: 'hello' }] })
  })

  test('a throw after other events of the same upstream event were encoded: theirs go out before the failure', async () => {
    // the finish ends the call the upstream left open and lets out the text that waited for it:
    // the call's done events, the text's, then the finish, whose store throws, all of one upstream event
    const fs = await streamed([
      start, { type: 'tool-input-start', index: 0, id: 'call_a', name: 'f' }, { type: 'tool-input-delta', index: 0, delta: '{}' },
      { type: 'text-delta', text: 'after' }, { type: 'finish', finish: { reason: 'tool_calls' }, usage },
    ])
    expect(types(fs).slice(-3)).toEqual(['response.error', 'response.failed', 'response.completed'])
    expect(types(fs)).toContain('response.output_text.delta')
    expect(fs.map((f) => f.data.sequence_number)).toEqual(fs.map((_, i) => i))
  })
})
