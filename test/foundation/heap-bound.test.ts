// A thread's heap is collected once it has grown a bound past what the last collection left
// alive, and not before: the batch workers' and the token worker's garbage no longer adds up
// to the process's peak (lib/heap-bound.ts).
import { expect, test } from 'bun:test'
import { heapLook } from '../../src/lib/heap-bound.ts'

test('collects only past the slack, then counts from what the collection left', () => {
  let used = 100
  let collections = 0
  const look = heapLook(50, () => used, () => {
    collections++
    used = 120
  })
  used = 149
  expect(look()).toBe(false)
  used = 150
  expect(look()).toBe(true)
  expect(collections).toBe(1)
  // the floor is now 120: 160 is within the slack, 170 is not
  used = 160
  expect(look()).toBe(false)
  used = 170
  expect(look()).toBe(true)
  expect(collections).toBe(2)
})

test('a collection asked for beside the running code: what it left is read at the next look, which collects nothing', () => {
  let used = 100
  let collections = 0
  const look = heapLook(
    50,
    () => used,
    () => collections++,
    true,
  )
  used = 150
  expect(look()).toBe(true)
  // the heap is still 150 when collect returns; by the next look the collection has ended
  used = 120
  expect(look()).toBe(false)
  expect(collections).toBe(1)
  // the floor is now 120 (what the next look saw), not the 150 collect returned on
  used = 169
  expect(look()).toBe(false)
  used = 170
  expect(look()).toBe(true)
  expect(collections).toBe(2)
})
