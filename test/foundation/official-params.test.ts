// "Unknown parameter → 400" means a parameter that neither the specification nor the current
// official API of that surface defines. The official SDKs pinned in package.json declare each
// API's request body; every top-level field they declare must be a row of the surface's
// parameter table, so that an SDK upgrade that brings a new parameter fails here before a
// client of it gets a 400. (The parameter walk then checks what each row does.)
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { knownNames, type ParamTable } from '../../src/routing/params.ts'
import { PARAMS as CHAT } from '../../src/surfaces/chat/params.ts'
import { PARAMS as MESSAGES } from '../../src/surfaces/messages/params.ts'
import { PARAMS as RESPONSES } from '../../src/surfaces/responses/params.ts'

const modules = join(import.meta.dir, '..', '..', 'node_modules')

/** The top-level field names of `export interface NAME { … }` in a declaration file. */
function fieldsOf(file: string, name: string): string[] {
  const text = readFileSync(join(modules, file), 'utf8')
  const start = text.indexOf(`export interface ${name} {`)
  if (start < 0) throw new Error(`${name} is not declared in ${file}`)
  const fields: string[] = []
  let depth = 0
  for (const line of text.slice(text.indexOf('{', start)).split('\n')) {
    const m = depth === 1 ? /^\s*([a-z_][a-z0-9_]*)\??:/.exec(line) : null
    if (m) fields.push(m[1]!)
    for (const c of line) depth += c === '{' ? 1 : c === '}' ? -1 : 0
    if (depth === 0) break
  }
  return fields
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
