// The text a relayed stream produced, kept to bill a stream that ends early: pieces pushed as
// text and as the bytes a read carried come back as one text, in their order, whatever their
// mix and size (the buffer grows past its first size).
import { expect, test } from 'bun:test'
import { ProducedText } from '../../src/lib/produced-text.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()

test('pieces of text and of bytes come back in their order', () => {
  const cases: (string | Uint8Array)[][] = [
    [],
    ['a'],
    ['', 'a'],
    ['a', 'b'],
    [enc.encode('x')],
    ['é', enc.encode('日本'), '🙂'],
    [enc.encode('1'), '2', enc.encode('3')],
    ['x'.repeat(300), 'y', enc.encode('z'.repeat(600)), '日'.repeat(200)],
  ]
  for (const pieces of cases) {
    const p = new ProducedText()
    for (const piece of pieces) {
      if (typeof piece === 'string') p.push(piece)
      else p.pushBytes(piece, 0, piece.length)
    }
    expect(p.text()).toBe(pieces.map((x) => (typeof x === 'string' ? x : dec.decode(x))).join(''))
    expect(p.length).toBe(pieces.length)
  }
})

test('a piece of bytes is the part of a read it names', () => {
  const p = new ProducedText()
  const read = enc.encode('data: {"content":"héllo"}\n\n')
  const from = 'data: {"content":"'.length
  p.pushBytes(read, from, from + enc.encode('héllo').length)
  expect(p.text()).toBe('héllo')
})

test('a character split across two pieces is one character; a half no piece completes stays in its place', () => {
  const pair = '\u{1F642}'
  const p = new ProducedText()
  for (const piece of ['a', pair[0]!, pair[1]! + 'b', pair[0]!]) p.push(piece)
  expect(p.text()).toBe('a' + pair + 'b' + pair[0])
  // the first piece alone, then its other half
  const q = new ProducedText()
  q.push(pair[0]!)
  expect(q.text()).toBe(pair[0])
  q.push(pair[1]!)
  expect(q.text()).toBe(pair)
  expect(q.length).toBe(2)
  // bytes after a half: the half goes first, as the replacement character UTF-8 makes of it
  const r = new ProducedText()
  r.push('x' + pair[0]!)
  r.pushBytes(enc.encode('yz'), 0, 2)
  expect(r.text()).toBe('x\uFFFDyz')
})
