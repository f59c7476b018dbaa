// "Unknown parameter → 400" means a parameter that neither the specification nor the current
// official API of that surface defines. The official SDKs pinned in package.json declare each
// API's request body; every top-level field they declare must be a row of the surface's
// parameter table, so that an SDK upgrade that brings a new parameter fails here before a
// client of it gets a 400 (the parameter walk then checks what each row does). Likewise every
// input item type the openai SDK declares must be one the responses surface takes, and every
// tool type one a Claude model gets translated or is named as left out (never a 400).
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { knownNames, type ParamTable } from '../../src/routing/params.ts'
import { PARAMS as CHAT } from '../../src/surfaces/chat/params.ts'
import { PARAMS as MESSAGES } from '../../src/surfaces/messages/params.ts'
import { EFFORTS } from '../../src/routing/owned-values.ts'
import { BLOCKS_BY_ROLE } from '../../src/surfaces/messages/schema.ts'
import { HOSTED_TOOLS } from '../../src/surfaces/responses/decode.ts'
import { ITEM_TYPES } from '../../src/surfaces/responses/items.ts'
import { PARAMS as RESPONSES } from '../../src/surfaces/responses/params.ts'

const modules = join(import.meta.dir, '..', '..', 'node_modules')

/** The lines of an interface body at its own level (not inside a nested type), from its declaration at `at`. */
function* ownLines(text: string, at: number): Generator<string> {
  let depth = 0
  for (const line of text.slice(text.indexOf('{', at)).split('\n')) {
    if (depth === 1) yield line
    for (const c of line) depth += c === '{' ? 1 : c === '}' ? -1 : 0
    if (depth === 0) return
  }
}

/** The top-level field names of `export interface NAME { … }` in a declaration file. */
function fieldsOf(file: string, name: string): string[] {
  const text = readFileSync(join(modules, file), 'utf8')
  const start = text.indexOf(`export interface ${name} {`)
  if (start < 0) throw new Error(`${name} is not declared in ${file}`)
  return [...ownLines(text, start)].flatMap((line) => /^\s*([a-z_][a-z0-9_]*)\??:/.exec(line)?.[1] ?? [])
}

const CASES: [string, ParamTable, string, string][] = [
  ['chat', CHAT, 'openai/resources/chat/completions/completions.d.ts', 'ChatCompletionCreateParamsBase'],
  ['responses', RESPONSES, 'openai/resources/responses/responses.d.ts', 'ResponseCreateParamsBase'],
  ['messages', MESSAGES, '@anthropic-ai/sdk/resources/messages/messages.d.ts', 'MessageCreateParamsBase'],
  ['messages (beta)', MESSAGES, '@anthropic-ai/sdk/resources/beta/messages/messages.d.ts', 'MessageCreateParamsBase'],
]

describe('every parameter the official SDKs declare is one the surface knows', () => {
  for (const [surface, table, file, name] of CASES) {
    test(`${surface}: ${name}`, () => {
      const declared = fieldsOf(file, name)
      // the reading found the body: its well-known fields are there
      expect(declared).toEqual(expect.arrayContaining(['model', surface.startsWith('chat') || surface.startsWith('messages') ? 'messages' : 'input']))
      const known = new Set(knownNames(table))
      expect(declared.filter((f) => !known.has(f))).toEqual([])
    })
  }
})

const RESPONSES_TYPES = 'openai/resources/responses/responses.d.ts'
const CHAT_TYPES = 'openai/resources/chat/completions/completions.d.ts'

/**
 * The `type` literals of each member of one of the openai SDK's unions (its own interfaces, and
 * those in their namespaces); a member that is a string literal itself is that string.
 */
function unionTypes(union: string, file = RESPONSES_TYPES): string[] {
  const text = readFileSync(join(modules, file), 'utf8')
  const members = new RegExp(`export type ${union} = ([^;]+);`).exec(text)
  if (!members) throw new Error(`${union} is not declared in ${file}`)
  return members[1]!.split('|').flatMap((member) => {
    if (/^\s*'[a-z_]+'\s*$/.test(member)) return [member.trim().slice(1, -1)]
    const [ns, name] = member.trim().includes('.') ? member.trim().split('.') : [undefined, member.trim()]
    const at = ns ? text.indexOf(`interface ${name} {`, text.indexOf(`export declare namespace ${ns} {`)) : text.indexOf(`export interface ${name} {`)
    for (const line of at < 0 ? [] : ownLines(text, at)) {
      const m = /^\s*type\??: ('[a-z_0-9]+'(?: \| '[a-z_0-9]+')*)(?: \| null)?;/.exec(line)
      if (m) return m[1]!.split(' | ').map((t) => t.slice(1, -1))
    }
    throw new Error(`no type literal for ${member.trim()} in ${file}`)
  })
}

test('every input item type the openai SDK declares is one the responses surface takes', () => {
  const declared = unionTypes('ResponseInputItem')
  expect(declared).toEqual(expect.arrayContaining(['message', 'function_call', 'function_call_output', 'reasoning']))
  expect(declared.filter((t) => !ITEM_TYPES.has(t))).toEqual([])
})

test('every tool type the openai SDK declares is one a Claude model gets or is told it does not', () => {
  const declared = unionTypes('Tool')
  expect(declared).toEqual(expect.arrayContaining(['function', 'custom', 'web_search']))
  expect(declared.filter((t) => t !== 'function' && t !== 'custom' && !HOSTED_TOOLS.has(t))).toEqual([])
})

test('every chat tool type and tool choice the openai SDK declares is one the chat surface takes', () => {
  expect(unionTypes('ChatCompletionTool', CHAT_TYPES).sort()).toEqual(['custom', 'function'])
  const choices = unionTypes('ChatCompletionToolChoiceOption', CHAT_TYPES)
  expect(choices.filter((c) => !['none', 'auto', 'required', 'function', 'custom', 'allowed_tools'].includes(c))).toEqual([])
})

test('every content block type the Anthropic SDK declares is one the messages surface takes', () => {
  const declared = unionTypes('ContentBlockParam', '@anthropic-ai/sdk/resources/messages/messages.d.ts')
  expect(declared).toEqual(expect.arrayContaining(['text', 'image', 'tool_use', 'tool_result', 'thinking']))
  // server tools' result blocks are taken by their suffix, whatever the tool
  const taken = (t: string) => Object.values(BLOCKS_BY_ROLE).some((blocks) => Object.hasOwn(blocks, t)) || t.endsWith('_tool_result')
  expect(declared.filter((t) => !taken(t))).toEqual([])
})

test("every reasoning effort the openai SDK declares is one a translation to a Claude model knows", () => {
  const text = readFileSync(join(modules, 'openai/resources/shared.d.ts'), 'utf8')
  const declared = [...(/export type ReasoningEffort = ([^;]+);/.exec(text)?.[1] ?? '').matchAll(/'([a-z]+)'/g)].map((m) => m[1]!)
  expect(declared).toEqual(expect.arrayContaining(['low', 'medium', 'high']))
  expect(declared.filter((e) => !EFFORTS.includes(e))).toEqual([])
})
