// Deleting old rows off the request path: in small steps, each followed by a pause as long as
// it took, so a large backlog takes at most half the thread (on SQLite a step runs on the thread
// that serves requests) and requests go on between steps. The steps of every pruner of the
// process (records, stored responses, batch items) take turns: together they take at most half
// the thread too (two at once, each pausing as long as it stepped, took nearly all of it).

/** What one step deleted, and whether more may be left. */
export interface PruneStep {
  deleted: number
  more: boolean
}

/** The step (and its pause) under way in this process, any pruner's. */
let turn: Promise<unknown> = Promise.resolve()

/** `f` once every step asked for before it has ended, its pause included. */
function inTurn<T>(f: () => Promise<T>): Promise<T> {
  const mine = turn.then(f)
  turn = mine.catch(() => {})
  return mine
}

/** Runs `step` until it says nothing more is left, or `stopped()` says to end; resolves with the rows deleted. */
export async function pruneInSteps(step: () => Promise<PruneStep>, stopped: () => boolean): Promise<number> {
  let total = 0
  for (;;) {
    if (stopped()) return total
    const { deleted, more } = await inTurn(async () => {
      const started = performance.now()
      const r = await step()
      // the pause: no pruner's step in it (a row written since may be old, and this one may stop)
      if (r.more) await Bun.sleep(Math.max(1, performance.now() - started))
      return r
    })
    total += deleted
    if (!more || stopped()) return total
  }
}
