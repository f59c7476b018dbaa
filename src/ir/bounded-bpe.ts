// o200k counting that is linear in its input and bounded in the time it holds the loop.
// BPE is cheap on ordinary words but costs about a microsecond a character
// on long runs of letters, and more than linear on one huge run (a 1 MB one-word prompt
// took the gateway's loop for minutes). So:
// - text is cut into segments where the o200k pre-tokenizer starts a new piece anyway, so
//   ordinary text (prose, code, compact JSON) counts exactly as one encode() of the whole;
// - each segment has a cost, known before encoding it (long runs dear, the rest cheap);
//   counting is exact up to a budget of cost, and the rest is estimated from the ratio of
//   tokens to characters counted so far. Costs are derived from the characters, never from
//   a clock, so a count is deterministic (the mock provider's contract).
import { nextTurn } from '../lib/turn.ts'

type Bpe = typeof import('gpt-tokenizer/encoding/o200k_base')
let bpe: Bpe | undefined

/**
 * The encoding's tables cost tens of MiB and tens of ms to load: only a gateway that
 * actually needs them (mock traffic, an interrupted stream) pays, on first use.
 */
export function tokenizer(): Bpe {
  if (bpe) return bpe
  bpe = require('gpt-tokenizer/encoding/o200k_base') as Bpe
  // its cache of merged pieces holds 100,000 by default: tens of MiB after a day of varied
  // text, for a hit rate that 10,000 nearly matches on the short pieces segments() makes
  bpe.setMergeCacheSize(MERGE_CACHE)
  return bpe
}

const MERGE_CACHE = 10_000

const SEGMENT = 2048
export const MAX_RUN = 256
/** Runs of letters (or of punctuation) at least this long are the slow case of BPE. */
const LONG = /[\p{L}\p{M}]{33,}|[^\s\p{L}\p{M}\p{N}]{33,}/gu
/** Cost units: about a microsecond. Ordinary characters cost a twentieth of a long run's. */
const CHEAP = 0.05

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a)
const isAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
/** ASCII punctuation except the apostrophe (o200k keeps `'s`, `'re`… with their word). */
const isPunct = (c: number) => c > 32 && c < 127 && !isAlnum(c) && c !== 39

/**
 * The text as segments that encode to the same tokens as the whole, for ordinary text:
 * cuts fall where the o200k pre-tokenizer starts a new piece anyway — before a space that
 * ends a word, or, inside a long run without spaces (compact JSON, code), between an ASCII
 * letter or digit and the punctuation after it. Only a run with no such place (one
 * enormous word) is cut blindly every MAX_RUN characters: not ordinary text, and BPE on it
 * must stay linear.
 */
export function* segments(text: string): Generator<string> {
  let start = 0
  let runStart = 0
  let safe = -1
  let prev = 32
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (!isSpace(c)) {
      if (isSpace(prev)) runStart = i
      else if (isPunct(c) && isAlnum(prev)) safe = i
      if (i - Math.max(runStart, start) >= MAX_RUN) {
        const cut = safe > start ? safe : i
        yield text.slice(start, cut)
        start = cut
        safe = -1
      }
    } else if (c === 32 && !isSpace(prev) && i - start >= SEGMENT) {
      // A word ends at this space (not at a line break: o200k keeps `!!\n` together).
      yield text.slice(start, i)
      start = i
      safe = -1
    }
    prev = c
  }
  if (start < text.length) yield text.slice(start)
}

export function segmentCost(seg: string): number {
  let slow = 0
  for (const m of seg.matchAll(LONG)) slow += m[0].length
  return slow + (seg.length - slow) * CHEAP
}

export interface CountBudget {
  /** Cost counted exactly; past it the rest is estimated. */
  exact: number
  /** Async only: cost between two turns of the event loop. */
  slice?: number
}

/** Sync: about 4 ms of the loop at most. */
export const SYNC_BUDGET: CountBudget = { exact: 4_000 }
/** Async: about a second of CPU, given back to the loop every 2 ms. */
export const ASYNC_BUDGET: CountBudget = { exact: 1_000_000, slice: 2_000 }

function estimate(tokens: number, countedChars: number, restChars: number): number {
  // Nothing counted yet (a budget of 0): a BPE token is rarely shorter than a character's quarter.
  const ratio = countedChars > 0 ? tokens / countedChars : 0.25
  return tokens + Math.ceil(ratio * restChars)
}

/**
 * The count as steps: it yields after every `budget.slice` of cost (never, without one), so
 * a caller can run it to the end at once, give the loop back between steps, or interleave
 * it with other counts (the token worker shares itself between keys that way).
 */
export function* countSteps(text: string, budget: CountBudget = SYNC_BUDGET): Generator<void, number> {
  if (!text) return 0
  const { encode } = tokenizer()
  let tokens = 0
  let spent = 0
  let sinceTurn = 0
  let counted = 0
  for (const seg of segments(text)) {
    const cost = segmentCost(seg)
    spent += cost
    if (spent > budget.exact && counted > 0) return estimate(tokens, counted, text.length - counted)
    sinceTurn += cost
    if (budget.slice && sinceTurn > budget.slice) {
      yield
      sinceTurn = cost
    }
    tokens += encode(seg).length
    counted += seg.length
  }
  return tokens
}

/** Steps run to their end, with no turn given back. */
export function finish<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

/** The cheap bound used when there is no time to count: a BPE token is rarely shorter than a quarter character. */
export const roughCount = (text: string): number => estimate(0, 0, text.length)

export function countBounded(text: string, budget: CountBudget = SYNC_BUDGET): number {
  return finish(countSteps(text, { exact: budget.exact }))
}


export async function countBoundedAsync(text: string, budget: CountBudget = ASYNC_BUDGET): Promise<number> {
  const steps = countSteps(text, budget)
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
    await nextTurn()
  }
}

/** The token bytes as the library gives them: a string, or the UTF-8 of part of one. */
type TokenParts = { bytePairEncodingCoreProcessor: { decodeNativeGenerator(tokens: number[]): Iterable<string | Uint8Array> } }

/**
 * Tokens → the text of the whole characters they hold. A cut may end inside a character; the
 * library's own decode keeps those bytes in a decoder it shares across calls, so they would
 * start the next text it decodes (another request's reply). Here the bytes go through a
 * decoder of this call's own, and what is left of a character at the end is dropped with it.
 */
function decodeWhole(tokens: number[]): string {
  const { bytePairEncodingCoreProcessor: core } = (tokenizer() as unknown as { default: TokenParts }).default
  const dec = new TextDecoder()
  let out = ''
  for (const part of core.decodeNativeGenerator(tokens)) out += typeof part === 'string' ? part : dec.decode(part, STREAM)
  return out
}

const STREAM = { stream: true }

/** `text` cut to at most `max` tokens, encoding only as much of it as that needs. */
export function truncateBounded(text: string, max: number): { text: string; cut: boolean } {
  return finish(truncateSteps(text, max))
}

/** truncateBounded as steps, yielding after every `slice` of cost. */
export function* truncateSteps(text: string, max: number, slice = Infinity): Generator<void, { text: string; cut: boolean }> {
  const { encode } = tokenizer()
  const kept: number[] = []
  let sinceTurn = 0
  for (const seg of segments(text)) {
    sinceTurn += segmentCost(seg)
    if (sinceTurn > slice) {
      yield
      sinceTurn = 0
    }
    const t = encode(seg)
    if (kept.length + t.length > max) {
      for (let i = 0; kept.length < max; i++) kept.push(t[i]!)
      return { text: decodeWhole(kept), cut: true }
    }
    for (const x of t) kept.push(x)
  }
  return { text, cut: false }
}
