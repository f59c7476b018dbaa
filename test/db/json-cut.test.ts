// A stored JSON array cut into pieces for the request thread to parse one at a time: the pieces
// must parse, joined, to exactly the array, however its strings spell brackets, commas, quotes
// and escapes; only the array's own commas cut it.
import { expect, test } from 'bun:test'
import { cutJsonArray } from '../../src/db/json-cut.ts'

const tricky = Array.from({ length: 3000 }, (_, i) => ({
  id: `msg_${i}`,
  content: i % 3 ? `a "quoted" \\ back, [bracket], {brace} ${'é😀\u2028'.repeat(i % 7)}` : [{ type: 'text', text: '],[' }, null, 1.5e-7],
  nested: { list: [[], [{}], ','] },
}))

test('pieces of whole items parse, joined, to the array itself', () => {
  const text = JSON.stringify(tricky)
  for (const size of [1, 500, 64 * 1024, 10 * text.length]) {
    const pieces = cutJsonArray(text, size)
    expect(pieces.flatMap((p) => JSON.parse(p) as unknown[])).toEqual(tricky)
    if (size < text.length / 4) expect(pieces.length).toBeGreaterThan(1)
  }
})

test('an array too short to cut, an empty one, or one item comes back whole', () => {
  expect(cutJsonArray('[]', 1)).toEqual(['[]'])
  expect(cutJsonArray('[{"a":"x,y"}]', 1)).toEqual(['[{"a":"x,y"}]'])
  expect(cutJsonArray('[1,2,3]', 100)).toEqual(['[1,2,3]'])
})
