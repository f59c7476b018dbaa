// What a request needs of a fallback, read from each surface's own body: the image parts of the
// three wires wherever a message, an item or a tool result holds them, and tools declared. A
// prompt too large to look through whole is taken to need nothing (no fallback is passed over).
import { describe, expect, test } from 'bun:test'
import { canTake, needsOf } from '../../src/routing/needs.ts'

const needs = (body: Record<string, unknown>, prompt?: unknown[]) => [...needsOf(body, prompt)].sort()

describe('what a request needs of a fallback', () => {
  test('each wire’s image part, where its messages or items hold it', () => {
    expect(needs({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] })).toEqual(['images'])
    expect(needs({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] })).toEqual(['images'])
    expect(needs({ input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] })).toEqual(['images'])
    expect(needs({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }] }] })).toEqual(['images'])
    // a Responses thread's earlier items count as its input does
    expect(needs({ input: 'and now?' }, [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }])).toEqual(['images'])
  })

  test('text that only names an image, and a tool schema, are no image', () => {
    expect(needs({ messages: [{ role: 'user', content: 'send {"type":"image_url"} please' }] })).toEqual([])
    expect(needs({ input: 'hi', tools: [] })).toEqual([])
    expect(needs({ messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { type: { type: 'string', enum: ['image'] } } } } }] })).toEqual(['tools'])
  })

  test('tools, the legacy `functions` too', () => {
    expect(needs({ messages: [], functions: [{ name: 'f' }] })).toEqual(['tools'])
    expect(needs({ input: 'hi', tools: [{ type: 'web_search' }] })).toEqual(['tools'])
  })

  test('GPT-5’s own tools: custom ones, apply_patch and shell; a type that names an object’s own key is none of them', () => {
    expect(needs({ input: 'x', tools: [{ type: 'custom', name: 'apply_patch' }] })).toEqual(['custom-tools', 'tools'])
    expect(needs({ input: 'x', tools: [{ type: 'apply_patch' }, { type: 'shell' }] })).toEqual(['patch-and-shell', 'tools'])
    expect(needs({ input: 'x', tools: [{ type: 'constructor' }, { type: '__proto__' }, { type: 'function', name: 'f' }] })).toEqual(['tools'])
  })

  test('a JSON schema the reply must follow, on chat and on Responses; JSON mode is not one', () => {
    expect(needs({ messages: [], response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } })).toEqual(['json-schema'])
    expect(needs({ input: 'x', text: { format: { type: 'json_schema', name: 'x', schema: {} } } })).toEqual(['json-schema'])
    expect(needs({ messages: [], response_format: { type: 'json_object' } })).toEqual([])
    expect(needs({ input: 'x', text: { format: { type: 'text' } } })).toEqual([])
  })

  test('a prompt past the bound is looked at no further, and needs nothing', () => {
    const many = Array.from({ length: 150_000 }, () => ({ type: 'text', text: 'a' }))
    const body = { messages: [{ role: 'user', content: [...many, { type: 'image_url', image_url: { url: 'https://x' } }] }] }
    expect(needs(body)).toEqual([])
  })

  test('a model lacking nothing takes anything; one lacking images takes a request of text and tools', () => {
    expect(canTake(undefined, new Set(['images', 'tools']))).toBe(true)
    expect(canTake(['images'], new Set(['tools']))).toBe(true)
    expect(canTake(['images'], new Set(['images']))).toBe(false)
  })
})
