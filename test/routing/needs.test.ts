// What a request needs of a fallback, read from each surface's own body: the image parts of the
// three wires wherever a message, an item or a tool result holds them, and tools declared. A
// prompt too large to look through whole is taken to need nothing (no fallback is passed over).
// And what the catalog says each model lacks: its table's, the generation's, the config's.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildCatalog } from '../../src/config/catalog.ts'
import { loadConfig } from '../../src/config/load.ts'
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

  test('files: chat’s file part, Responses’ input_file, Claude’s PDF document; not a document of plain text', () => {
    expect(needs({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] })).toEqual(['files'])
    expect(needs({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }, { type: 'input_image', image_url: 'https://x' }] }] })).toEqual(['files', 'images'])
    expect(needs({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }] }] })).toEqual(['files'])
    expect(needs({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello' } }] }] })).toEqual([])
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

describe('what a catalog model lacks', () => {
  const catalogOf = (yaml: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-lacks-'))
    writeFileSync(join(dir, 'switchyard.yaml'), yaml)
    return buildCatalog(loadConfig({ env: {}, flags: {}, cwd: dir }))
  }
  const lacks = (c: ReturnType<typeof catalogOf>, id: string) => [...(c.resolve(id)?.lacks ?? [])].sort()

  test('the built-in table’s, and GPT-5’s tools by the generation of the id a model is sent as', () => {
    const c = catalogOf('models: []\n')
    expect(lacks(c, 'gpt-3.5-turbo')).toEqual(['custom-tools', 'files', 'images', 'json-schema', 'patch-and-shell'])
    expect(lacks(c, 'gpt-4.1')).toEqual(['custom-tools', 'patch-and-shell'])
    expect(lacks(c, 'gpt-5')).toEqual(['patch-and-shell'])
    expect(lacks(c, 'gpt-5.1')).toEqual([])
    expect(lacks(c, 'claude-haiku-4-5')).toEqual([])
    expect(lacks(c, 'mock-gpt')).toEqual([])
  })

  test('a configured model keeps what the model it is sent as lacks, but what its own keys say', () => {
    const c = catalogOf(`models:
  - { id: gpt-3.5-turbo, family: openai, fallbacks: [gpt-4.1] }
  - { id: cheap, family: openai, upstream_id: gpt-3.5-turbo, images: true }
  - { id: local, family: openai, upstream_id: llama-3-8b, files: false, tools: false }
  - { id: sonnet, family: anthropic, upstream_id: claude-sonnet-4-5-20250929, images: false }
`)
    expect(lacks(c, 'gpt-3.5-turbo')).toEqual(['custom-tools', 'files', 'images', 'json-schema', 'patch-and-shell'])
    expect(lacks(c, 'cheap')).toEqual(['custom-tools', 'files', 'json-schema', 'patch-and-shell'])
    expect(lacks(c, 'local')).toEqual(['custom-tools', 'files', 'patch-and-shell', 'tools'])
    expect(lacks(c, 'sonnet')).toEqual(['images'])
  })
})

test('a chain of nested contents deeper than the bound is looked at no further', () => {
  let deep: Record<string, unknown> = { type: 'image', source: { type: 'url', url: 'https://x' } }
  for (let i = 0; i < 150_000; i++) deep = { type: 'text', content: deep }
  expect([...needsOf({ messages: [deep] })]).toEqual([])
  expect([...needsOf({ messages: [{ type: 'text', content: { type: 'text', content: { type: 'image' } } }] })]).toEqual(['images'])
})
