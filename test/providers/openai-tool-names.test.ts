// Tool names and call ids past OpenAI's limits (64 and 40 characters), as the OpenAI adapter
// sends them: short forms that are one to one, and never a name the request already holds.
import { expect, test } from 'bun:test'
import type { GenerationRequest } from '../../src/ir/types.ts'
import { shortToolNames } from '../../src/providers/openai/tool-names.ts'
import { request } from './support.ts'

const tool = (name: string) => ({ name, parameters: { type: 'object', properties: {} } })
const long = 'b'.repeat(65)

test('a name of 64 characters goes as it is; 65 and 128 go as 64, the same every time', () => {
  const at64 = 'a'.repeat(64)
  expect(shortToolNames(request({ tools: [tool(at64)] })).back).toBeUndefined()
  for (const name of [long, 'c'.repeat(128)]) {
    const a = shortToolNames(request({ tools: [tool(name)] }))
    const b = shortToolNames(request({ tools: [tool(name)] }))
    expect(a.req.tools![0]!.name).toHaveLength(64)
    expect(a.req.tools![0]!.name).toBe(b.req.tools![0]!.name)
    expect(a.back!.get(a.req.tools![0]!.name)).toBe(name)
  }
})

test("a short form that is another tool's own name is moved past it: each call comes back under its own tool's name", () => {
  const taken = shortToolNames(request({ tools: [tool(long)] })).req.tools![0]!.name
  const both: GenerationRequest = request({ tools: [tool(long), tool(taken)] })
  const { req, back } = shortToolNames(both)
  const [a, b] = req.tools!.map((t) => t.name)
  expect(b).toBe(taken)
  expect(a).not.toBe(taken)
  expect(a).toHaveLength(64)
  expect(back!.get(a!)).toBe(long)
  expect(back!.has(taken)).toBe(false)
})

test("a name of characters OpenAI refuses (a history call's `search.docs`) goes as one it takes, the same every time, and back", () => {
  for (const name of ['search.docs', 'mcp::fs/read', 'wetter_für_heute', `${'d.'.repeat(40)}x`]) {
    const a = shortToolNames(request({ tools: [tool(name)] }))
    const up = a.req.tools![0]!.name
    expect(up).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    expect(shortToolNames(request({ tools: [tool(name)] })).req.tools![0]!.name).toBe(up)
    expect(a.back!.get(up)).toBe(name)
  }
  // two names that differ only where OpenAI refuses a character stay two
  const two = shortToolNames(request({ tools: [tool('a.b'), tool('a:b')] })).req.tools!.map((t) => t.name)
  expect(new Set(two).size).toBe(2)
})
