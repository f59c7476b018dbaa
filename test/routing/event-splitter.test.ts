// The pass-through's SSE splitter: the same events however the upstream's text is cut into
// reads, a large event found and joined once rather than at every read, and an event that
// never ends refused at its bound rather than held until memory runs out.
import { expect, test } from 'bun:test'
import { EventSplitter } from '../../src/routing/sse-events.ts'

/** Every event of `text` as a splitter fed `cuts` reads of it hands them out, the unended rest last. */
function split(text: string, cuts: number[], max?: number): string[] {
  const s = new EventSplitter(max)
  const out: string[] = []
  let at = 0
  for (const c of [...cuts, text.length]) {
    out.push(...s.push(text.slice(at, c)))
    at = c
  }
  const rest = s.rest()
  if (rest) out.push(rest)
  return out
}

test('events come out the same at any cut of the reads: LF and CRLF ends, blank lines cut in two, empty reads', () => {
  const events = ['data: a\n\n', 'event: x\r\ndata: {"b":1}\r\n\r\n', ': keep-alive\n\n', 'data: ' + 'z'.repeat(300) + '\n\n', 'data: \u00e9\u4e2d\n\n', 'data: tail']
  const text = events.join('')
  let seed = 11
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
  for (let round = 0; round < 500; round++) {
    const n = 1 + Math.floor(random() * 20)
    const cuts = Array.from({ length: n }, () => Math.floor(random() * text.length)).sort((a, b) => a - b)
    expect(split(text, cuts)).toEqual(events)
  }
  // every cut at once: a read of one character each
  expect(split(text, Array.from({ length: text.length }, (_, i) => i))).toEqual(events)
})

test('a 20 MB event read 64 KiB at a time is joined once: the reads before its end hand out nothing', () => {
  const big = 'data: ' + 'y'.repeat(20 * 1024 * 1024) + '\n\n'
  const s = new EventSplitter()
  const out: string[] = []
  for (let i = 0; i < big.length; i += 64 * 1024) {
    const got = s.push(big.slice(i, i + 64 * 1024))
    if (i + 64 * 1024 < big.length) expect(got).toEqual([])
    out.push(...got)
  }
  expect(out.length).toBe(1)
  expect(out[0]!.length).toBe(big.length)
  expect(s.empty).toBe(true)
})

test('an event past the bound is refused, saying so', () => {
  const s = new EventSplitter(1000)
  s.push('data: ' + 'x'.repeat(900))
  expect(() => s.push('x'.repeat(200))).toThrow('upstream sent an SSE event of more than 1000 characters')
  // ended events of any number stay within it: only what waits counts
  const t = new EventSplitter(1000)
  for (let i = 0; i < 100; i++) expect(t.push('data: ' + 'x'.repeat(100) + '\n\n').length).toBe(1)
})

test('a stream past its bound in all is refused, however small its events', () => {
  const s = new EventSplitter(1000, 5000)
  for (let i = 0; i < 50; i++) expect(s.push('data: ' + 'x'.repeat(92) + '\n\n').length).toBe(1)
  expect(() => s.push('data: ' + 'x'.repeat(92) + '\n\n')).toThrow('upstream sent a stream of more than 5000 characters')
})

