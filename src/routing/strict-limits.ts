// OpenAI's documented bounds on the size of a schema its strict mode takes, past which it refuses
// the whole request with a 400: enum values in all, the characters of property names, definition
// names, enum and const values, and one enum of many strings. A strict schema translated for a
// GPT model is sent with strict only within them; past them it goes without strict, as one
// strict mode would refuse for its shape does (OpenAI follows it without the guarantee). The
// property count and object nesting are strict-fit.ts's. Pure.
import { isObj } from '../lib/json.ts'

type Node = Record<string, unknown>

const MOST_ENUM_VALUES = 1_000
const MOST_CHARACTERS = 120_000
/** An enum of more strings than this holds at most MOST_BIG_ENUM_CHARACTERS of them. */
const BIG_ENUM = 250
const MOST_BIG_ENUM_CHARACTERS = 15_000
/** This walk's own bounds: a schema past them is taken as past OpenAI's. */
const MAX_DEPTH = 64
const MOST_NODES = 100_000

/** Keywords whose value is a map of subschemas by name (the names count), or subschemas. */
const NAMED = ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']
const SUBSCHEMAS = ['items', 'anyOf', 'allOf', 'oneOf', 'prefixItems', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains']

interface Tally {
  enumValues: number
  characters: number
  nodes: number
}

/** Whether `schema` is within OpenAI's strict mode size limits. */
export function withinStrictLimits(schema: Node): boolean {
  const t: Tally = { enumValues: 0, characters: 0, nodes: MOST_NODES }
  return walk(schema, t, 0) && t.enumValues <= MOST_ENUM_VALUES && t.characters <= MOST_CHARACTERS
}

const chars = (v: unknown): number => (typeof v === 'string' ? v.length : v === null || typeof v !== 'object' ? String(v).length : JSON.stringify(v).length)

function walk(s: unknown, t: Tally, depth: number): boolean {
  if (Array.isArray(s)) return s.every((x) => walk(x, t, depth + 1))
  if (!isObj(s)) return true
  if (depth > MAX_DEPTH || --t.nodes < 0) return false
  if (Array.isArray(s.enum)) {
    t.enumValues += s.enum.length
    let here = 0
    for (const v of s.enum) here += chars(v)
    t.characters += here
    if (s.enum.length > BIG_ENUM && s.enum.every((v) => typeof v === 'string') && here > MOST_BIG_ENUM_CHARACTERS) return false
  }
  if ('const' in s) t.characters += chars(s.const)
  if (t.enumValues > MOST_ENUM_VALUES || t.characters > MOST_CHARACTERS) return false
  for (const k of NAMED) {
    const m = s[k]
    if (!isObj(m)) continue
    for (const [name, sub] of Object.entries(m)) {
      t.characters += name.length
      if (!walk(sub, t, depth + 1)) return false
    }
  }
  for (const k of SUBSCHEMAS) if (s[k] !== undefined && !walk(s[k], t, depth + 1)) return false
  return true
}
