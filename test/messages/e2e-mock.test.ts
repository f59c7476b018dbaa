// The mock provider through the messages surface, for both families, with @anthropic-ai/sdk:
// its directives, a tool round trip as Claude Code makes it, pause_on_call_tools_start,
// and the in-band error of a mid-stream failure.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { startGateway, type Gateway } from '../helpers/server.ts'
import { messageFrames } from './e2e-helpers.ts'

let gw: Gateway
let client: Anthropic
beforeAll(async () => {
  gw = await startGateway({ env: { SWITCHYARD_KEY_BURST_RPS: '1000' } })
  client = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/beta`, maxRetries: 0 })
})
afterAll(async () => {
  await gw.stop()
})

const bash = { name: 'Bash', description: 'Run a shell command', input_schema: { type: 'object' as const, properties: { command: { type: 'string' }, description: { type: 'string' } }, required: ['command'] } }
const post = (body: unknown) =>
  fetch(`${gw.url}/api/beta/v1/messages?beta=true`, { method: 'POST', headers: { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) })

for (const model of ['mock-claude', 'mock-gpt']) {
  describe(model, () => {
    test("a last message with only an image is answered with what it held, not an earlier message's text, streamed or not", async () => {
      const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
      const body = {
        model, max_tokens: 100,
        messages: [
          { role: 'user' as const, content: 'Describe the picture I send next.' },
          { role: 'assistant' as const, content: 'Send it.' },
          { role: 'user' as const, content: [{ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: png } }] },
        ],
      }
      for (const m of [await client.messages.create(body), await client.messages.stream(body).finalMessage()]) {
        expect(m.content).toMatchObject([{ type: 'text', text: '(no text: 1 image)' }])
      }
    })

    test('mock: text — plain and streamed agree', async () => {
      const messages = [{ role: 'user' as const, content: 'mock: text Hello from the mock.' }]
      const plain = await client.messages.create({ model, max_tokens: 100, messages })
      const streamed = await client.messages.stream({ model, max_tokens: 100, messages }).finalMessage()
      expect(plain.content.map((b: any) => ({ type: b.type, text: b.text }))).toEqual([{ type: 'text', text: 'Hello from the mock.' }])
      expect(streamed.content.map((b: any) => ({ type: b.type, text: b.text }))).toEqual(plain.content.map((b: any) => ({ type: b.type, text: b.text })))
      expect(streamed.stop_reason).toBe(plain.stop_reason)
      expect(streamed.usage.input_tokens).toBe(plain.usage.input_tokens)
      expect(streamed.usage.output_tokens).toBe(plain.usage.output_tokens)
      expect(plain.stop_reason).toBe('end_turn')
      // message_start says the prompt's size, as Claude's does (LangChain reads it only there)
      const frames = messageFrames(await (await post({ model, max_tokens: 100, stream: true, messages })).text())
      expect(frames[0]!.data.message.usage.input_tokens).toBe(plain.usage.input_tokens)
    })

    test.skipIf(model !== 'mock-claude')('stop_sequences: the text ends before the first one met, with stop_reason stop_sequence naming it, streamed or not', async () => {
      const params = { model, max_tokens: 100, stop_sequences: ['never', 'STOP'], messages: [{ role: 'user' as const, content: 'mock: text one two STOP three' }] }
      const plain = await client.messages.create(params)
      const streamed = await client.messages.stream(params).finalMessage()
      for (const m of [plain, streamed]) {
        expect(m.content).toEqual([{ type: 'text', text: 'one two ' }] as any)
        expect(m.stop_reason).toBe('stop_sequence')
        expect(m.stop_sequence).toBe('STOP')
      }
    })

    test('a tool round trip as Claude Code makes it: tool_use, then the tool_result is answered', async () => {
      const first = await client.messages.stream({
        model, max_tokens: 1000, tools: [bash],
        messages: [{ role: 'user', content: 'mock: tool Bash {"command":"echo sy-ok","description":"echo"}' }],
      }).finalMessage()
      expect(first.stop_reason).toBe('tool_use')
      const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock
      expect(use.name).toBe('Bash')
      expect(use.input).toEqual({ command: 'echo sy-ok', description: 'echo' })
      const second = await client.messages.stream({
        model, max_tokens: 1000, tools: [bash],
        messages: [
          { role: 'user', content: 'mock: tool Bash {"command":"echo sy-ok","description":"echo"}' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sy-ok' }] },
          // Claude Code puts a system message after the user turn: not the turn to answer
          { role: 'system', content: 'env: linux' } as any,
        ],
      }).finalMessage()
      expect(second.stop_reason).toBe('end_turn')
      expect((second.content[0] as Anthropic.TextBlock).text).toBe('tool result: sy-ok')
    })

    test('a tool_result naming no call of the turn before it is refused as Anthropic refuses it, not answered', async () => {
      const first = await client.messages.create({ model, max_tokens: 1000, tools: [bash], messages: [{ role: 'user', content: 'mock: tool Bash {"command":"ls"}' }] })
      const turns = (id: string): Anthropic.MessageParam[] => [
        { role: 'user', content: 'mock: tool Bash {"command":"ls"}' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'a b' }] },
      ]
      const err = await client.messages.create({ model, max_tokens: 100, tools: [bash], messages: turns('toolu_other') }).catch((e) => e)
      expect(err).toBeInstanceOf(Anthropic.BadRequestError)
      expect(err.error.error).toBe('messages[2].content[0].tool_use_id: "toolu_other" answers no tool_use of the assistant message before it')
      const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock
      const unanswered = [...turns(use.id).slice(0, 2), { role: 'user' as const, content: 'go on' }]
      const err2 = await client.messages.stream({ model, max_tokens: 100, tools: [bash], messages: unanswered }).finalMessage().catch((e) => e)
      expect(err2).toBeInstanceOf(Anthropic.BadRequestError)
      expect(err2.error.error).toBe(`messages[1].content: tool_use "${use.id}" has no tool_result answering it in the next message, messages[2]`)
    })

    test('pause_on_call_tools_start: the reply stops at the first tool_use block', async () => {
      const body = { model, max_tokens: 500, tools: [bash], tool_choice: { type: 'any' }, pause_on_call_tools_start: true, messages: [{ role: 'user', content: 'run it' }] }
      const res = await post(body)
      expect(res.status).toBe(200)
      const m = await res.json()
      expect(m.stop_reason).toBe('tool_use')
      expect(m.content.at(-1).type).toBe('tool_use')
      const s = await post({ ...body, stream: true })
      const frames = messageFrames(await s.text())
      expect(frames.at(-2)!.data.delta.stop_reason).toBe('tool_use')
      expect(frames.at(-1)!.event).toBe('message_stop')
    })

    test('mock: error 429 → 429 with Retry-After, before any byte', async () => {
      const res = await post({ model, max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'mock: error 429' }] })
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(res.headers.get('x-request-id')).toBeTruthy()
    })

    test('mock: fail-midstream → an `error` event, then close: no message_delta or message_stop after it; the SDK throws', async () => {
      const res = await post({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'mock: text one two three\nmock: fail-midstream' }] })
      expect(res.status).toBe(200)
      const frames = messageFrames(await res.text())
      const last = frames.at(-1)!
      expect(last.event).toBe('error')
      expect(last.data).toMatchObject({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('mock') } })
      expect(frames.some((f) => f.event === 'message_stop' || f.event === 'message_delta')).toBe(false)
      const err = await client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'mock: text one two three\nmock: fail-midstream' }] }).finalMessage().catch((e) => e)
      expect(err).toBeInstanceOf(Error)
    })

    test('a failure in the middle of a tool call never ends its block: no arguments made whole, no content_block_stop before the error', async () => {
      const res = await post({ model, max_tokens: 100, stream: true, tools: [bash], messages: [{ role: 'user', content: 'mock: tool Bash {"command":"rm -rf build && make"}\nmock: fail-midstream' }] })
      const frames = messageFrames(await res.text())
      expect(frames.at(-1)!.event).toBe('error')
      const opened = frames.findIndex((f) => f.event === 'content_block_start' && (f.data as any).content_block.type === 'tool_use')
      expect(opened).toBeGreaterThanOrEqual(0)
      const after = frames.slice(opened + 1)
      expect(after.some((f) => f.event === 'content_block_stop')).toBe(false)
      expect(JSON.stringify(after)).not.toContain('_raw_arguments')
    })

    test('a failure in the middle of text leaves its block open, as Anthropic does: no content_block_stop before the error', async () => {
      const res = await post({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'mock: text a few words of text here\nmock: fail-midstream' }] })
      const frames = messageFrames(await res.text())
      expect(frames.at(-1)!.event).toBe('error')
      const opened = frames.findIndex((f) => f.event === 'content_block_start' && (f.data as any).content_block.type === 'text')
      expect(opened).toBeGreaterThanOrEqual(0)
      expect(frames.slice(opened + 1).some((f) => f.event === 'content_block_stop')).toBe(false)
    })
  })
}
