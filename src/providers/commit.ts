// "Commit late": read the first upstream event before handing a stream back, so a failure
// before any output is an ordinary (retryable) UpstreamError, not a mid-stream event. The
// verdict is the IR's one rule (ir/errors.ts), which the pass-through relay applies too.
import { firstEventFailure } from '../ir/errors.ts'
import type { StreamEvent } from '../ir/types.ts'

/** Pulls the first event; rejects when it is an error; otherwise yields it and the rest. */
export async function commitFirst(events: AsyncGenerator<StreamEvent>): Promise<AsyncGenerator<StreamEvent>> {
  const first = await events.next()
  const failure = first.done ? firstEventFailure({ done: true }) : first.value.type === 'error' ? firstEventFailure({ error: first.value.error }) : undefined
  if (failure) {
    await events.return(undefined)
    throw failure
  }
  const head = first.value as StreamEvent
  return (async function* () {
    try {
      yield head
      yield* events
    } finally {
      await events.return(undefined)
    }
  })()
}
