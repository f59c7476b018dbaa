// The Anthropic upstream stream reader, on text and thinking deltas in every form an encoder
// may write them: escapes decoded, other spacing, member order and extra members read alike,
// and broken JSON an error, never text. (A reader that skips the parse for the usual form must
// keep to this; one was tried, docs/bench.md.)
import { describe, expect, test } from 'bun:test'
import type { StreamEvent } from '../../src/ir/types.ts'
import { anthropicEvents } from '../../src/providers/anthropic/stream.ts'
import { parseSse } from '../../src/providers/sse.ts'

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = []
  for await (const e of events) out.push(e)
  return out
}

const body = (text: string) => new Response(text).body!

// --- Anthropic ---

const aEvent = (name: string, data: string) => `event: ${name}\ndata: ${data}\n\n`
const aDelta = (delta: Record<string, unknown>, index = 0) => JSON.stringify({ type: 'content_block_delta', index, delta })

function anthropicStream(deltas: string[]): string {
  return (
    aEvent('message_start', JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1 } } })) +
    aEvent('content_block_start', JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })) +
    deltas.map((d) => aEvent('content_block_delta', d)).join('') +
    aEvent('content_block_stop', JSON.stringify({ type: 'content_block_stop', index: 0 })) +
    aEvent('message_delta', JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } })) +
    aEvent('message_stop', JSON.stringify({ type: 'message_stop' }))
  )
}

const deltasOf = (evs: StreamEvent[]) => evs.filter((e) => e.type === 'text-delta' || e.type === 'reasoning-delta').map((e) => [e.type, (e as { text: string }).text])

describe('Anthropic text and thinking deltas', () => {
  test('every form gives the text a parse gives', async () => {
    const tricky = 'say "hi"\\ there\nline two\u2028é 🎉 </script>'
    const deltas = [
      aDelta({ type: 'text_delta', text: 'plain' }),
      aDelta({ type: 'text_delta', text: tricky }),
      // escapes written the long way, as another encoder may
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"caf\\u00e9 \\ud83c\\udf89 \\/"}}',
      // spacing, member order, extra members: the full way
      '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "spaced"}}',
      '{"index":0,"type":"content_block_delta","delta":{"text":"reordered","type":"text_delta"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"extra","future":1}}',
      aDelta({ type: 'text_delta', text: 'two digits' }, 12),
      aDelta({ type: 'thinking_delta', thinking: 'thought "quoted"' }),
      // an empty text makes no event
      aDelta({ type: 'text_delta', text: '' }),
    ]
    const evs = await collect(anthropicEvents(parseSse(body(anthropicStream(deltas)))))
    expect(deltasOf(evs)).toEqual([
      ['text-delta', 'plain'],
      ['text-delta', tricky],
      ['text-delta', 'café 🎉 /'],
      ['text-delta', 'spaced'],
      ['text-delta', 'reordered'],
      ['text-delta', 'extra'],
      ['text-delta', 'two digits'],
      ['reasoning-delta', 'thought "quoted"'],
    ])
    expect(evs.at(-1)).toMatchObject({ type: 'finish', usage: { outputTokens: 9 } })
  })

  for (const [why, data] of [
    ['a raw control character inside the string', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\u0001b"}}'],
    ['no index', '{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}'],
    ['a brace too many', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}}'],
    ['a string that does not close', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\\"}}'],
    ['a bad escape', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\q"}}'],
  ] as const) {
    test(`broken JSON is an error, never text: ${why}`, async () => {
      const sse = anthropicStream([data])
      const evs = await collect(anthropicEvents(parseSse(body(sse))))
      expect(deltasOf(evs)).toEqual([])
      expect(evs.at(-1)).toMatchObject({ type: 'error', error: { type: 'stream_error' } })
    })
  }
})
