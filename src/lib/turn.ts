/** A turn of the event loop: whatever is waiting (other requests, /health, messages) runs first. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve))

const waiting: (() => void)[] = []
let head = 0

function releaseOne() {
  const go = waiting[head]
  waiting[head++] = undefined as never
  if (head === waiting.length) {
    waiting.length = 0
    head = 0
  } else setImmediate(releaseOne)
  go?.()
}

/**
 * A turn of the event loop of one's own: callers are let go one a turn, in the order they
 * asked. Ten large bodies that arrive together each take a few milliseconds of parsing and
 * checking at once; let go together they would hold the loop for all ten back to back, and
 * /health (or any small request) would wait behind the lot.
 */
export function turnOfItsOwn(): Promise<void> {
  return new Promise<void>((resolve) => {
    if (waiting.push(resolve) - head === 1) setImmediate(releaseOne)
  })
}
