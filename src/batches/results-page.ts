// The results page (up to 1,000 results) read and written a step of rows at a time, a turn of
// the loop of its own before each step: read and written at once, eight pages of
// 1,000 asked together held every other request (/health) 0.1-0.7 s on 2 busy cores. The text
// is what the page was in one piece, byte for byte.
import { turnOfItsOwn } from '../lib/turn.ts'
import { itemResultText, resultsPageHead, RESULTS_PAGE_TAIL } from './shapes.ts'
import type { BatchStore } from './store.ts'
import type { BatchRow } from './types.ts'

/** Rows read a step (a few ms to read and write on a busy machine). */
export const PAGE_STEP = 100

/** The results with index in [offset, offset + limit), as the page's JSON text. */
export async function resultsPage(store: Pick<BatchStore, 'results'>, b: BatchRow, offset: number, limit: number): Promise<string> {
  const pieces = [resultsPageHead(b, offset, limit)]
  const to = offset + limit
  for (let from = offset, got = 0; got < limit; ) {
    await turnOfItsOwn()
    const want = Math.min(PAGE_STEP, limit - got)
    const rows = await store.results(b.id, from, to, want)
    if (rows.length > 0) pieces.push((got > 0 ? ',' : '') + rows.map(itemResultText).join(','))
    got += rows.length
    if (rows.length < want) break
    from = rows.at(-1)!.idx + 1
  }
  pieces.push(RESULTS_PAGE_TAIL)
  return pieces.join('')
}
