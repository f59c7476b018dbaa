// The finish-reason and usage tables of both wires.
import { describe, expect, test } from 'bun:test'
import { finishFromAnthropic } from '../../src/providers/anthropic/finish.ts'
import { overwriteUsage, usageFromAnthropic } from '../../src/providers/anthropic/usage.ts'
import { finishFromOpenAI } from '../../src/providers/openai/finish.ts'
import { usageFromOpenAI } from '../../src/providers/openai/usage.ts'

describe('finish reasons', () => {
  test('anthropic: every documented stop_reason explicit; unknown kept raw as other', () => {
    const got = ['end_turn', 'max_tokens', 'tool_use', 'refusal', 'pause_turn', 'model_context_window_exceeded', 'brand_new_reason'].map((r) => finishFromAnthropic(r).reason)
    expect(got).toEqual(['stop', 'length', 'tool_calls', 'refusal', 'pause', 'context_exceeded', 'other'])
    expect(finishFromAnthropic('brand_new_reason').raw).toBe('brand_new_reason')
    expect(finishFromAnthropic('stop_sequence', 'END')).toEqual({ reason: 'stop', raw: 'stop_sequence', stopSequence: 'END' })
    // a whole message whose server left stop_reason null (a server of the wire, not Anthropic)
    // ended as its content says: done, or at its calls; both surfaces then agree
    expect(finishFromAnthropic(null)).toEqual({ reason: 'stop' })
    expect(finishFromAnthropic(undefined, null, true)).toEqual({ reason: 'tool_calls' })
  })

  test('openai', () => {
    expect(['stop', 'length', 'tool_calls', 'function_call', 'content_filter', 'weird'].map((r) => finishFromOpenAI(r).reason)).toEqual([
      'stop', 'length', 'tool_calls', 'tool_calls', 'content_filter', 'other',
    ])
    // servers that speak the chat wire name the same ends their own way; an end_turn, not an unknown
    expect(['eos', 'eos_token', 'stop_sequence', 'max_tokens'].map((r) => finishFromOpenAI(r).reason)).toEqual(['stop', 'stop', 'stop', 'length'])
  })
})

describe('usage', () => {
  test('openai prompt_tokens includes cached: split into disjoint buckets', () => {
    expect(usageFromOpenAI({ prompt_tokens: 1420, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 1280 }, completion_tokens_details: { reasoning_tokens: 40 } })).toEqual({
      inputTokens: 140, cacheReadTokens: 1280, cacheWriteTokens: 0, outputTokens: 100, reasoningTokens: 40,
    })
  })

  test('anthropic message_delta usage overwrites, never adds', () => {
    const start = usageFromAnthropic({ input_tokens: 43, output_tokens: 1, cache_read_input_tokens: 5, cache_creation_input_tokens: 7 })
    expect(overwriteUsage(start, { output_tokens: 282 })).toEqual({ inputTokens: 43, outputTokens: 282, cacheReadTokens: 5, cacheWriteTokens: 7 })
    expect(overwriteUsage(start, { input_tokens: 50, output_tokens: 9, cache_read_input_tokens: 0 })).toEqual({ inputTokens: 50, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 7 })
  })
})
