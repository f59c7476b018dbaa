// Deleting old rows off the request path: in small steps, each followed by a pause as long as
// it took, so a large backlog takes at most half the thread (on SQLite a step runs on the thread
// that serves requests) and requests go on between steps.

/** What one step deleted, and whether more may be left. */
export interface PruneStep {
  deleted: number
  more: boolean
}

/** Runs `step` until it says nothing more is left, or `stopped()` says to end; resolves with the rows deleted. */
export async function pruneInSteps(step: () => Promise<PruneStep>, stopped: () => boolean): Promise<number> {
  let total = 0
  for (;;) {
    const started = performance.now()
    const { deleted, more } = await step()
    total += deleted
    if (!more || stopped()) return total
    await Bun.sleep(Math.max(1, performance.now() - started))
    // stopped during the pause: no step after it (a row written since may be old)
    if (stopped()) return total
  }
}
